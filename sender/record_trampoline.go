//go:build linux && (amd64 || arm64)

package sender

import (
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// trampoline is the handler put in front of the runtime's (sender_*.s). It
// is never called from Go: the kernel enters it with the C calling
// convention.
func trampoline()

// trampolineAddr is trampoline's entry, for the kernel.
func trampolineAddr() uintptr

// sigaction is the kernel's struct sigaction on amd64 and arm64.
type sigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// saSiginfo is SA_SIGINFO: the handler is given the siginfo.
const saSiginfo = 0x4

// Record puts the trampoline in front of the handler of each of sigs that
// has one taking a siginfo (the runtime's, once os/signal caught the
// signal); a signal left to its default or ignored keeps it. Call it
// once every signal of sigs is caught, from one goroutine, and never
// after anything else changed their handlers.
func Record(sigs []syscall.Signal) error {
	tramp := trampolineAddr()
	for _, sig := range sigs {
		if !recordable(sig) {
			continue
		}
		var old sigaction
		if err := rtSigaction(sig, nil, &old); err != nil {
			return err
		}
		if old.handler <= 1 || old.handler == tramp || old.flags&saSiginfo == 0 {
			continue // SIG_DFL, SIG_IGN, already recorded, or no siginfo to pass
		}
		// Stored before the trampoline can run: the system call that
		// installs it orders this store before any signal it lets in.
		atomic.StoreUintptr(&next[sig], old.handler)
		act := old
		act.handler = tramp
		if err := rtSigaction(sig, &act, nil); err != nil {
			return err
		}
	}
	return nil
}

// Of is the last recorded sender of sig.
func Of(sig syscall.Signal) Sender {
	if sig <= 0 || sig > maxSig {
		return Sender{Kind: Unknown}
	}
	code := atomic.LoadUint64(&codes[sig])
	return decode(atomic.LoadUint64(&senders[sig]), code)
}

func rtSigaction(sig syscall.Signal, act, old *sigaction) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig),
		uintptr(unsafe.Pointer(act)), uintptr(unsafe.Pointer(old)), 8, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

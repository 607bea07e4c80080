package forward

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Unrelayable are signals a Go program cannot catch: the runtime reserves
// 32 (glibc's SIGCANCEL) and 34 (SIGRTMIN, musl's SIGSYNCCALL) and installs
// no handler for them, so signal.Notify has no effect and their default
// action would kill lfinit when it is not PID 1.
var Unrelayable = []syscall.Signal{32, RTMin}

// kernelSigaction is the kernel's struct sigaction for rt_sigaction. Only
// the handler is set (SIG_IGN) and the rest is zero, so the field order of
// other architectures does not matter.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// IgnoreUnrelayable sets the signals of Unrelayable to SIG_IGN so that they
// cannot kill lfinit. Call it only after the child is started: an ignored
// disposition survives exec, and the child must start with defaults.
func IgnoreUnrelayable() error {
	act := kernelSigaction{handler: 1} // SIG_IGN
	for _, sig := range Unrelayable {
		_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
		if errno != 0 {
			return errno
		}
	}
	return nil
}

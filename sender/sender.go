// Package sender records who sent lfinit each of a few caught signals: the
// sender's pid and uid and the kind of sending (si_pid, si_uid, si_code of
// the kernel's siginfo), which os/signal does not pass on.
//
// A short trampoline (sender_amd64.s, sender_arm64.s) is put in front of
// the Go runtime's own handler for those signals only: it copies the three
// fields into a table and jumps to the runtime's handler with every
// register as the kernel left it, so a signal still goes where it went
// before, through os/signal, at the cost of a few instructions. Where no
// trampoline is written (other architectures), Record does nothing and
// every sender is unknown.
package sender

import "syscall"

// Kind is where a signal came from, as the status file and the logs name it.
type Kind string

const (
	// Process is a process lfinit can see: its pid is in lfinit's PID
	// namespace (kill, tgkill or sigqueue).
	Process Kind = "process"
	// Outside is a process outside lfinit's PID namespace, which the
	// kernel shows as pid 0: the container engine, the kubelet's runtime,
	// or anything on the host.
	Outside Kind = "outside-pid-namespace"
	// Kernel is the kernel itself, e.g. a terminal's hangup or Ctrl-C.
	Kernel Kind = "kernel"
	// Unknown: not recorded (an architecture without the trampoline, or a
	// signal that came before lfinit started recording).
	Unknown Kind = "unknown"
)

// Sender is who sent a signal.
type Sender struct {
	Kind Kind
	Pid  int    // the sender's pid in lfinit's PID namespace (Process only)
	Uid  uint32 // its real uid (Process and Outside)
}

// The kernel's si_code values that say a process sent the signal: then
// si_pid and si_uid are the sender's.
const (
	siUser  = 0  // kill, pidfd_send_signal
	siQueue = -1 // sigqueue
	siTkill = -6 // tkill, tgkill
)

// maxSig is the highest signal the table holds.
const maxSig = 64

// The table the trampoline writes, indexed by signal number: the first
// word of si_pid and si_uid (little-endian: pid low, uid high), and
// si_code with bit 32 set to say that the slot was written. next holds
// the handler each signal had before (the runtime's), where the
// trampoline jumps.
var (
	senders [maxSig + 1]uint64
	codes   [maxSig + 1]uint64
	next    [maxSig + 1]uintptr
)

// written marks a slot of codes that the trampoline has filled.
const written = 1 << 32

// decode is the Sender of a slot's two words.
func decode(who, code uint64) Sender {
	if code&written == 0 {
		return Sender{Kind: Unknown}
	}
	pid, uid := int32(uint32(who)), uint32(who>>32)
	switch int32(uint32(code)) {
	case siUser, siQueue, siTkill:
		if pid == 0 {
			return Sender{Kind: Outside, Uid: uid}
		}
		return Sender{Kind: Process, Pid: int(pid), Uid: uid}
	}
	return Sender{Kind: Kernel}
}

// recordable reports whether sig may get the trampoline: a signal the
// table holds, and not one the runtime must see untouched for a fault of
// its own (it would still see it, but nothing is gained there).
func recordable(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGTRAP, syscall.SIGSYS,
		syscall.SIGKILL, syscall.SIGSTOP:
		return false
	}
	return sig > 0 && sig <= maxSig
}

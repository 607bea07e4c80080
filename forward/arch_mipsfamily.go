//go:build mips || mipsle || mips64 || mips64le

package forward

import "syscall"

// RTMax is the highest signal number (SIGRTMAX): MIPS has 127.
const RTMax = 127

// archSignals are the table rows of signals that only some architectures have.
var archSignals = []Entry{
	{Sig: syscall.SIGEMT, Name: "SIGEMT", Handling: Relay, Urgent: true, Why: "emulator trap: relayed like any user signal"},
}

// kernelSigaction is MIPS's struct sigaction for rt_sigaction: the flags
// come first. Only the handler is set (SIG_IGN) and the rest is zero.
type kernelSigaction struct {
	flags   uint32
	handler uintptr
	mask    [4]uint32
}

// sigsetSize is the kernel's sigset_t size: 128 signals.
const sigsetSize = 16

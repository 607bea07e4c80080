//go:build !(mips || mipsle || mips64 || mips64le)

package forward

import "syscall"

// RTMax is the highest signal number (SIGRTMAX).
const RTMax = 64

// archSignals are the table rows of signals that only some architectures have.
var archSignals = []Entry{
	{Sig: syscall.SIGSTKFLT, Name: "SIGSTKFLT", Handling: Relay, Urgent: true, Why: "stack fault (unused by Linux): relayed like any user signal"},
}

// kernelSigaction is the kernel's struct sigaction for rt_sigaction. Only
// the handler is set (SIG_IGN) and the rest is zero.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// sigsetSize is the kernel's sigset_t size: 64 signals.
const sigsetSize = 8

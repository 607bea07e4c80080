//go:build !(mips || mipsle || mips64 || mips64le)

package early

import (
	"os"
	"syscall"
)

// rtMax is the highest signal number (SIGRTMAX).
const rtMax = 64

// archFatal are the fatal signals only some architectures have.
var archFatal = []os.Signal{syscall.SIGSTKFLT}

//go:build mips || mipsle || mips64 || mips64le

package early

import (
	"os"
	"syscall"
)

// rtMax is the highest signal number (SIGRTMAX): MIPS has 127.
const rtMax = 127

// archFatal are the fatal signals only some architectures have.
var archFatal = []os.Signal{syscall.SIGEMT}

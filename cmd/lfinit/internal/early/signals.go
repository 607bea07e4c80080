package early

import (
	"os"
	"syscall"
)

// fatal are the Urgent signals of forward.Table whose Go default ends
// lfinit (exit 2 or a stack dump; SIGPIPE on a write to a broken stderr),
// the default shutdown signals first. The runtime makes each of TERM…PIPE
// wait for a thread round trip, and none of the faults.
var fatal = append([]os.Signal{
	syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGABRT, syscall.SIGPIPE,
	syscall.SIGILL, syscall.SIGTRAP, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGSEGV, syscall.SIGSYS,
}, archFatal...)

// stops are the other Urgent signals: the kernel's default stops lfinit
// when it is not PID 1, and the Go runtime installs no handler for them.
var stops = []os.Signal{syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU}

// notRelayed are the signals of 1…rtMax that are not caught on Relayed:
// SIGCHLD (on Child), the uncatchable ones, the runtime's own (SIGURG,
// SIGPROF, 33) and those it installs no handler for (32, 34).
var notRelayed = []os.Signal{
	syscall.SIGCHLD, syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGURG, syscall.SIGPROF,
	syscall.Signal(32), syscall.Signal(33), syscall.Signal(34),
}

// rest is every signal caught on Relayed that is neither fatal nor a stop.
func rest() []os.Signal {
	var out []os.Signal
	for n := syscall.Signal(1); n <= rtMax; n++ {
		if !in(n, notRelayed) && !in(n, fatal) && !in(n, stops) {
			out = append(out, n)
		}
	}
	return out
}

// in reports whether sig is one of list (slices.Contains would be one
// more import to initialise first).
func in(sig os.Signal, list []os.Signal) bool {
	for _, s := range list {
		if s == sig {
			return true
		}
	}
	return false
}

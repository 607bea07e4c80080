// Package early catches lfinit's signals before any other package of the
// binary is initialised.
//
// The Go runtime installs its own handlers when it starts; a SIGTERM that
// reaches a Go PID 1 before signal.Notify makes it exit 2 (PITFALLS.md).
// Initialising the larger packages (Prometheus, protobuf) takes about a
// millisecond, so the catch cannot wait for main. This package imports
// nothing but the standard library's signal support, so Go initialises it
// among the first; the signals it queues are handed to the supervisor.
package early

import (
	"os"
	"os/signal"
	"syscall"
)

// Caught is the list this package catches: every signal lfinit relays,
// plus SIGPIPE (ignored) and SIGCHLD (reaped). A test keeps it equal to
// forward.Relayed.
var Caught = func() []syscall.Signal {
	s := []syscall.Signal{1, 2, 3, 6, 10, 12, 14, 15, 16, 18, 20, 21, 22, 24, 25, 26, 28, 29, 30}
	for n := 35; n <= 64; n++ {
		s = append(s, syscall.Signal(n))
	}
	return s
}()

// Relayed and Child receive the caught signals from the first instant.
var (
	Relayed = make(chan os.Signal, 256)
	Child   = make(chan os.Signal, 1)
)

func init() {
	signal.Notify(Child, syscall.SIGCHLD)
	sigs := []os.Signal{syscall.SIGPIPE}
	for _, s := range Caught {
		sigs = append(sigs, s)
	}
	signal.Notify(Relayed, sigs...)
}

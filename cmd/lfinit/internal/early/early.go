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
	"slices"
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

// Done is closed once every signal of Caught is caught.
var Done = make(chan struct{})

// urgent are the signals whose Go default would end or stop lfinit before
// they are caught: HUP, INT and TERM (exit 2), QUIT, ABRT and STKFLT (exit
// with a dump), PIPE (exit on a write to a broken stderr), TSTP, TTIN and
// TTOU (stop). The runtime catches and drops every other one until then.
var urgent = []syscall.Signal{1, 2, 3, 6, 13, 15, 16, 20, 21, 22}

func init() {
	// Each signal caught costs the runtime a round trip to the thread that
	// keeps its signal mask, and during package initialisation the main
	// goroutine is locked to the main thread, which makes every round trip
	// a handoff between two locked threads: catching all of them here, in
	// line, adds about 1.4ms to the start (700 context switches instead of
	// 250). A goroutine catches them instead, the urgent ones first, while
	// the other packages initialise.
	go func() {
		defer close(Done)
		signal.Notify(Child, syscall.SIGCHLD)
		var now []os.Signal
		for _, s := range urgent {
			now = append(now, s)
		}
		signal.Notify(Relayed, now...)
		for _, s := range Caught {
			if !slices.Contains(urgent, s) {
				// One at a time: a delivery waits for the lock Notify holds.
				signal.Notify(Relayed, s)
			}
		}
	}()
}

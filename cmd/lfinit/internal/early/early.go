// Package early catches lfinit's signals before any other package of the
// binary is initialised.
//
// The Go runtime installs its own handlers when it starts; a SIGTERM that
// reaches a Go PID 1 before signal.Notify makes it exit 2. Initialising the
// larger packages (Prometheus, protobuf) takes about a millisecond, so the
// catch cannot wait for main. This package imports only the standard
// library's signal support and forward (whose own imports are as small), so
// Go initialises it among the first; what it catches is forward.Table's
// list, and the signals it queues are handed to the supervisor.
package early

import (
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/light-fabric/lfinit/forward"
)

// Relayed and Child receive the caught signals from the first instant.
var (
	Relayed = make(chan os.Signal, 256)
	Child   = make(chan os.Signal, 1)
)

// Done is closed once every signal of forward.Caught is caught.
var Done = make(chan struct{})

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
		for _, s := range forward.Urgent {
			now = append(now, s)
		}
		signal.Notify(Relayed, now...)
		for _, s := range forward.Caught {
			if s != syscall.SIGCHLD && !slices.Contains(forward.Urgent, s) {
				// One at a time: a delivery waits for the lock Notify holds.
				signal.Notify(Relayed, s)
			}
		}
	}()
}

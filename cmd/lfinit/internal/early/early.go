// Package early catches lfinit's signals from the first instant: SIGTERM
// before any other package of the binary is initialised, the others
// while they initialise.
//
// The Go runtime installs its own handlers when it starts; a SIGTERM that
// reaches a Go PID 1 before signal.Notify makes it exit 2, and one that
// arrives before the runtime's handlers is dropped by the kernel. Go
// initialises a package once its imports are, the lexically first ready
// package first: this one imports only os/signal (and os and syscall,
// which os/signal needs anyway), so it is ready as soon as os/signal is,
// and its init is the first code of lfinit's own to run. It keeps its own list of
// the signals to catch, checked against forward.Table by its test:
// importing forward would wait for fmt, reflect, unicode and x/sys/unix.
package early

import (
	"os"
	"os/signal"
	"syscall"
)

// Relayed and Child receive the caught signals from the first instant.
var (
	Relayed = make(chan os.Signal, 256)
	Child   = make(chan os.Signal, 1)
)

// Fatal is closed once every signal whose Go default ends lfinit is
// caught; Done once every signal of forward.Caught is.
var (
	Fatal = make(chan struct{})
	Done  = make(chan struct{})
)

func init() {
	// SIGTERM, the engine's stop, in line: nothing of lfinit's runs before
	// it. The runtime queues a signal from the moment Notify marks it
	// wanted, before the round trip to the thread that keeps its signal
	// mask (and, for the first, that thread's start).
	signal.Notify(Relayed, fatal[0])
	// The others from a goroutine, while the other packages initialise:
	// waiting here would not catch them any sooner (each waits for its
	// round trip either way), only start main a millisecond later. During
	// initialisation the main goroutine is locked to the main thread,
	// which would double the thread hand-offs of each round trip.
	// The signal-mask thread exists now (the first Notify started it):
	// the round trips run on one CPU, beside the initialisation.
	go catchRest(confine())
}

// catchRest catches the fatal signals but the first and closes Fatal,
// then catches the stop signals, SIGCHLD and the other relayed signals,
// gives every thread its CPU mask back and closes Done.
func catchRest(c confinement) {
	defer close(Done)
	defer c.release()
	signal.Notify(Relayed, fatal[1:]...)
	close(Fatal)
	signal.Notify(Relayed, stops...)
	signal.Notify(Child, syscall.SIGCHLD)
	for _, s := range rest() {
		// One at a time: a delivery waits for the lock Notify holds.
		signal.Notify(Relayed, s)
	}
}

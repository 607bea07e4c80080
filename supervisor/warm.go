package supervisor

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/exitcode"
	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/internal/startpages"
)

// settleAfter is how long the child runs before lfinit gives back the
// pages its start-up faulted in: a service that exits at once (a job, a
// failed start) is not delayed by it, and an idle one keeps a small
// footprint from then on.
const settleAfter = time.Second

// settle gives back the start-up's pages (startpages.Drop) once the child
// has run settleAfter, then takes the stop path again, so that a stop does
// not fault the pages it needs back in. Nothing is given back once a
// shutdown began or the child exited.
func (r *runner) settle() {
	if r.m.ShuttingDown() || r.reaped {
		return
	}
	startpages.Drop()
	r.warmStopPath()
}

// warmStopPath takes, at idle, the path a stop takes: once when the child
// has started, so that a first SIGTERM does not fault in code the start
// never ran (each fault maps 16 pages, microseconds apiece) between the
// signal and its forward, and again after settle gave the pages back.
//
// A SIGCHLD to lfinit itself goes the way every signal goes (the runtime's
// handler, os/signal, the loop's select) and costs one empty reap; a
// throwaway machine makes a shutdown's decisions; signal 0 to the child is
// a delivery that delivers nothing.
func (r *runner) warmStopPath() {
	m := core.NewMachine(r.Options)
	now := time.Now()
	m.Started(now, true)
	m.Signal(now, m.ShutdownSignals()[0])
	m.ChildExited(now, exitcode.SignalBase+int(syscall.SIGTERM), true)
	_ = forward.Deliver(r.child, r.Target, 0)
	_ = unix.Kill(r.self, syscall.SIGCHLD)
}

package supervisor

import (
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/exitcode"
	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/internal/startpages"
)

// settleAfter is how long the child runs before lfinit settles: a service
// that exits at once (a job, a failed start) is not delayed by it, and a
// stop after it finds lfinit settled. Sooner costs starts: settled at 5 ms,
// a start of /bin/true took 0.55 ms longer (five interleaved runs), its
// exit meeting the settle, for a stop at 10 ms 0.2 ms shorter (the exit
// unmaps the ~7 MB of the binary the start-up left mapped).
const settleAfter = time.Second

// settle gives back the start-up's pages (startpages.Drop), off any stop's
// path, then takes the stop path again, the final records' included
// (Rehearse), so that a stop does not fault the pages it needs back in;
// an idle lfinit keeps a small footprint from then on. Nothing is given
// back once a shutdown began or the child exited.
func (r *runner) settle() {
	if r.m.ShuttingDown() || r.reaped {
		return
	}
	startpages.Drop()
	m := r.warmStopPath()
	if r.Rehearse != nil {
		r.Rehearse(r.resultOf(m, m.Code()))
	}
}

// warmStopPath takes, at idle, the path a stop takes: once when the child
// has started, so that a first SIGTERM does not fault in code the start
// never ran (each fault maps 16 pages, microseconds apiece) between the
// signal and its forward, and again after settle gave the pages back.
//
// A SIGCHLD to lfinit itself goes the way every signal goes (the runtime's
// handler, os/signal, the loop's select) and costs one empty reap; a
// throwaway machine makes a shutdown's decisions; signal 0 to the child is
// a delivery that delivers nothing. It returns the throwaway machine.
func (r *runner) warmStopPath() *core.Machine {
	m := core.NewMachine(r.Options)
	now := time.Now()
	m.Started(now, true)
	m.Signal(now, usualStop(m.ShutdownSignals()))
	m.ChildExited(now, exitcode.SignalBase+int(syscall.SIGTERM), true)
	_ = forward.Deliver(r.child, r.Target, 0)
	_ = unix.Kill(r.self, syscall.SIGCHLD)
	return m
}

// usualStop is the shutdown signal a stop most likely brings: SIGTERM,
// what orchestrators send, when it is one.
func usualStop(sigs []syscall.Signal) syscall.Signal {
	if slices.Contains(sigs, syscall.SIGTERM) {
		return syscall.SIGTERM
	}
	return sigs[0]
}

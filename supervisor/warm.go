package supervisor

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/exitcode"
	"github.com/light-fabric/lfinit/forward"
)

// warmStopPath takes, once and at idle, the path a stop takes: startpages.Drop has
// just given back the pages of lfinit's binary, and without this the first
// SIGTERM would fault the ones it needs back in (each fault maps 16 pages,
// microseconds apiece) between the signal and its forward.
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

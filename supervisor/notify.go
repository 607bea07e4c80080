package supervisor

import (
	"time"

	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/notify"
	"github.com/light-fabric/lfinit/reaper"
	"github.com/light-fabric/lfinit/statusfile"
)

// notifyQueue is how many received messages wait for the loop before
// more are dropped (and counted): room for a burst, not for a flood.
const notifyQueue = 64

// serviceState is the loop's side of --ready-notify.
type serviceState struct {
	word       core.Service
	messages   <-chan notify.Datagram // nil without --ready-notify
	status     string                 // the last STATUS=
	errno      int                    // the last ERRNO=, 0: none
	probeReady bool                   // --ready-tcp/--ready-http passed
}

// listen starts reading the notify socket, when there is one.
func (r *runner) listen() {
	r.service.word = core.NewService(r.Notify != nil)
	if r.Notify == nil {
		return
	}
	ch := make(chan notify.Datagram, notifyQueue)
	r.service.messages = ch
	self := r.self
	go r.Notify.Serve(ch, func(pid int) bool { return reaper.Descends(self, pid) })
}

// gatesOpen reports whether every readiness gate lets the child be ready:
// the check (--ready-tcp/--ready-http) and the service's READY=1.
func (r *runner) gatesOpen() bool {
	return (r.Readiness == nil || r.service.probeReady) && r.service.word.GateOpen()
}

// heard takes one message of the notify protocol from lfinit's tree (the
// listener counted it, and keeps strangers and garbage to itself).
func (r *runner) heard(d notify.Datagram) []core.Action {
	msg := &d.Msg
	if msg.Has(notify.KindStatus) && msg.Status != r.service.status {
		r.service.status, r.status.unpublished = msg.Status, true
		r.Log.Debug("service status", "status", msg.Status, "sender_pid", d.Pid)
	}
	if msg.Has(notify.KindErrno) {
		r.service.errno, r.status.unpublished = msg.Errno, true
		r.Log.Info("the service reported an error", "errno", msg.Errno, "sender_pid", d.Pid)
	}
	r.logAsides(d)
	if r.service.word.Heard(msg.Has(notify.KindReady), msg.Has(notify.KindReloading), msg.Has(notify.KindStopping)) {
		r.status.unpublished = true
		r.Log.Info("the service says it is "+r.service.word.State(), "sender_pid", d.Pid)
	}
	if r.m.Phase() == statusfile.Ready {
		r.status.setUnready(r.service.word.Unready())
		return nil
	}
	if r.m.Phase() == statusfile.Starting && r.gatesOpen() {
		return r.m.MarkReady(time.Now())
	}
	return nil
}

// logAsides logs what lfinit records but does not act on.
func (r *runner) logAsides(d notify.Datagram) {
	msg := &d.Msg
	if msg.Has(notify.KindExtendTimeout) {
		r.Log.Info("the service asks for more time; lfinit's deadlines never move", "extend_seconds", seconds(msg.Extend), "sender_pid", d.Pid)
	}
	if msg.Has(notify.KindBusError) {
		r.Log.Info("the service reported a bus error", "buserror", msg.BusError, "sender_pid", d.Pid)
	}
	if msg.Has(notify.KindMainPID) {
		r.Log.Info("MAINPID is not followed; use --pidfile for a service that daemonizes", "mainpid", msg.MainPID, "sender_pid", d.Pid)
	}
	if n := msg.Lines[notify.KindGarbage]; n > 0 {
		r.Log.Debug("ignored malformed notify lines", "lines", int(n), "sender_pid", d.Pid)
	}
}

// publish adds the service's word to a status, when it is heard.
func (s *serviceState) publish(st *statusfile.Status) {
	if s.messages == nil {
		return
	}
	state := s.word.State()
	st.ServiceState = &state
	if s.status != "" {
		status := s.status
		st.ServiceStatus = &status
	}
	if s.errno != 0 {
		errno := s.errno
		st.ServiceErrno = &errno
	}
	st.Ready = st.Ready && !s.word.Unready()
}

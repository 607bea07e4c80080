package supervisor

import (
	"time"

	"golang.org/x/sys/unix"

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
	busError   string                 // the last BUSERROR=
	extend     time.Duration          // the last EXTEND_TIMEOUT_USEC=, 0: none
	dog        core.Watchdog          // --watchdog
	dogArmed   time.Time              // the deadline the watchdog timer is set for
	mainPID    int                    // MAINPID of the tree, followed when the main process exits
	probeReady bool                   // --ready-tcp/--ready-http passed
}

// listen starts reading the notify socket, when there is one.
func (r *runner) listen() {
	r.service.word = core.NewService(r.Notify != nil)
	if r.Notify == nil {
		return
	}
	r.service.dog = core.NewWatchdog(r.Watchdog, time.Now())
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
	var acts []core.Action
	switch {
	case r.m.Phase() == statusfile.Ready:
		r.status.setUnready(r.service.word.Unready())
	case r.m.Phase() == statusfile.Starting && r.gatesOpen():
		acts = r.m.MarkReady(time.Now())
	}
	// The watchdog last: a trigger's stop follows whatever else was said.
	return append(acts, r.fedOrTriggered(d)...)
}

// fedOrTriggered feeds the watchdog on WATCHDOG=1, and takes a
// WATCHDOG=trigger as a miss.
func (r *runner) fedOrTriggered(d notify.Datagram) []core.Action {
	now := time.Now()
	if d.Msg.Has(notify.KindWatchdog) && r.service.dog.Fed(now) {
		r.Log.Info("the service's watchdog is fed again; lfinit is live", "sender_pid", d.Pid)
		r.setLive(true)
		r.status.unpublished = true
	}
	if d.Msg.Has(notify.KindWatchdogTrigger) && r.service.dog.Trigger(now) {
		return r.watchdogMissed(now, d.Pid)
	}
	return nil
}

// watchdogDue checks the watchdog when its timer fires.
func (r *runner) watchdogDue() []core.Action {
	now := time.Now()
	if !r.service.dog.Due(now) {
		return nil
	}
	return r.watchdogMissed(now, 0)
}

// watchdogMissed makes lfinit not live (/livez, lfinit probe live, the
// status file) and, with --watchdog-action=stop, begins its shutdown.
func (r *runner) watchdogMissed(now time.Time, sender int) []core.Action {
	r.status.unpublished = true
	r.setLive(false)
	how := "no WATCHDOG=1 within " + r.Watchdog.String()
	if r.service.dog.Triggered() {
		how = "the service sent WATCHDOG=trigger"
	}
	if !r.WatchdogStop {
		r.Log.Warn("the service's watchdog was missed; lfinit is not live", "why", how, "sender_pid", sender, "action", "none")
		return nil
	}
	r.Log.Warn("the service's watchdog was missed; lfinit is not live and stops", "why", how, "sender_pid", sender, "action", "stop")
	return r.m.StopFor(now, "watchdog")
}

// setLive tells the metrics' /livez, when there are metrics.
func (r *runner) setLive(live bool) {
	if l, ok := r.Recorder.(interface{ SetLive(bool) }); ok {
		l.SetLive(live)
	}
}

// armWatchdog sets timer for the watchdog's next deadline, when it moved.
func (r *runner) armWatchdog(timer *time.Timer) {
	dog := &r.service.dog
	if !dog.On() || !dog.MissedAt().IsZero() || dog.Deadline().Equal(r.service.dogArmed) {
		return
	}
	r.service.dogArmed = dog.Deadline()
	timer.Reset(time.Until(dog.Deadline()))
}

// logAsides logs what lfinit records but does not act on.
func (r *runner) logAsides(d notify.Datagram) {
	msg := &d.Msg
	if msg.Has(notify.KindExtendTimeout) {
		r.service.extend, r.status.unpublished = msg.Extend, true
		r.Log.Info("the service asks for more time; lfinit's deadlines never move", "extend_seconds", seconds(msg.Extend), "sender_pid", d.Pid)
	}
	if msg.Has(notify.KindBusError) {
		r.service.busError, r.status.unpublished = msg.BusError, true
		r.Log.Info("the service reported a bus error", "buserror", msg.BusError, "sender_pid", d.Pid)
	}
	if msg.Has(notify.KindMainPID) {
		r.mainPID(msg.MainPID, d.Pid)
	}
	if n := msg.Lines[notify.KindGarbage]; n > 0 {
		r.Log.Debug("ignored malformed notify lines", "lines", int(n), "sender_pid", d.Pid)
	}
}

// mainPID answers MAINPID=pid: the process lfinit follows already is it;
// one outside lfinit's tree is refused, as --pidfile refuses it; another
// of the tree becomes the main process when the current one exits
// (handOver), as systemd follows a service's MAINPID.
func (r *runner) mainPID(pid, sender int) {
	switch {
	case pid == r.child && !r.reaped:
		r.Log.Debug("MAINPID is the main process", "mainpid", pid, "sender_pid", sender)
	case !reaper.Descends(r.self, pid):
		r.Log.Warn("refused MAINPID: not a process of lfinit's tree; lfinit never follows or signals a process it did not start", "mainpid", pid, "sender_pid", sender)
	default:
		r.service.mainPID = pid
		r.Log.Info("MAINPID: lfinit follows this process once the main process exits", "mainpid", pid, "main_pid", r.child, "sender_pid", sender)
	}
}

// handOver follows the process MAINPID named when the main process has
// just exited with ws: it must be alive and lfinit's own child by now (the
// exit re-parented it), so that its exit reaches lfinit. It reports
// whether the run goes on with it.
func (r *runner) handOver(ws unix.WaitStatus) bool {
	pid := r.service.mainPID
	r.service.mainPID = 0
	if pid <= 0 || pid == r.child {
		return false
	}
	if problem := Adoptable(reaper.Walk(r.self), r.self, pid, reaper.Read); problem != "" {
		r.Log.Warn("MAINPID not followed: it "+problem, "mainpid", pid)
		return false
	}
	r.Log.Info("the main process exited; following MAINPID", "exited_pid", r.child, "status", describe(ws), "mainpid", pid)
	r.follow(pid)
	r.status.unpublished = true
	return true
}

// drainNotify takes the messages already queued, so that a MAINPID sent
// before the main process exited is heard before its exit is.
func (r *runner) drainNotify() []core.Action {
	var acts []core.Action
	for len(r.service.messages) > 0 {
		acts = append(acts, r.heard(<-r.service.messages)...)
	}
	return acts
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
	if s.busError != "" {
		busError := s.busError
		st.ServiceBusError = &busError
	}
	if s.extend > 0 {
		extend := s.extend.Seconds()
		st.ServiceExtendSeconds = &extend
	}
	st.Ready = st.Ready && !s.word.Unready()
	if at := s.dog.MissedAt(); !at.IsZero() {
		u := at.UTC()
		st.WatchdogMissedAt = &u
	}
}

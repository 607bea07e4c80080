package supervisor

import (
	"time"

	"github.com/light-fabric/lfinit/budget"
	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/statusfile"
)

// publishing is the status's own bookkeeping: when the run and its phases
// began, and whether a snapshot is due.
type publishing struct {
	publishers  []Publish
	recorder    Recorder // told of readiness first, before anything else
	start       time.Time
	readyAt     time.Time
	phaseSince  time.Time
	unpublished bool // publish a status after this batch of actions
	unready     bool // the service took its readiness back (STOPPING=1, RELOADING=1)
}

// enter records that phase p began at now; a status is then due.
func (p *publishing) enter(ph core.Phase, now time.Time) {
	p.phaseSince, p.unpublished = now, true
	if ph == statusfile.Ready {
		p.readyAt = now
	}
	p.setReady(ph == statusfile.Ready && !p.unready)
}

// setUnready records, in the ready phase, that the service took its
// readiness back (or gave it again); the probes hear of it at once.
func (p *publishing) setUnready(unready bool) {
	if p.unready != unready {
		p.unready, p.unpublished = unready, true
		p.setReady(!unready)
	}
}

// setReady tells the recorder (the metrics' readiness) at once.
func (p *publishing) setReady(ready bool) {
	if p.recorder != nil {
		p.recorder.SetReady(ready)
	}
}

// flush hands every publisher one snapshot, when the last batch of
// actions left one due; snapshot is built only then.
func (p *publishing) flush(snapshot func() statusfile.Status) {
	if !p.unpublished {
		return
	}
	p.unpublished = false
	if len(p.publishers) == 0 {
		return
	}
	s := snapshot()
	for _, publish := range p.publishers {
		publish(s)
	}
}

// snapshot is what the machine and the phases' times say now; the runner
// adds its counts (runner.snapshot).
func (p *publishing) snapshot(m *core.Machine) statusfile.Status {
	now := time.Now().UTC()
	s := statusfile.Status{
		Version:    statusfile.Version,
		Phase:      m.Phase(),
		Ready:      m.Phase() == statusfile.Ready,
		StartedAt:  utc(p.start),
		ReadyAt:    utc(p.readyAt),
		PhaseSince: p.phaseSince.UTC(),
		UpdatedAt:  now,
	}
	if o := m.Outcome(); o != statusfile.Running {
		code := m.Code()
		s.Outcome, s.ExitCode = &o, &code
		if !m.ShuttingDown() && o != statusfile.Failed {
			reason := "child-exit"
			s.Reason = &reason
		}
	}
	if m.ShuttingDown() {
		tl := m.Timeline()
		reason := m.Reason()
		s.Reason = &reason
		if !m.OwnStop() {
			sig := forward.Name(m.Trigger())
			s.Signal = &sig
		}
		s.SignalAt, s.GraceDeadline = utc(tl.SignalAt), utc(tl.GraceDeadline)
	}
	if hard, ok := m.HardDeadline(); ok {
		s.HardDeadline = utc(hard)
		left := budget.Left(hard, now).Seconds()
		s.RemainingSeconds = &left
	}
	return s
}

// snapshot is the state to publish now.
func (r *runner) snapshot() statusfile.Status {
	return r.snapshotOf(r.m)
}

// snapshotOf is snapshot with m in the place of the run's machine.
func (r *runner) snapshotOf(m *core.Machine) statusfile.Status {
	s := r.status.snapshot(m)
	s.Pid = r.self
	s.Reaped = r.nreaped
	s.ReadyError = r.probe.lastError()
	r.tree.publish(&s)
	r.hookStatus(&s)
	r.end.publish(&s)
	r.service.publish(&s)
	r.stopFrom.publish(&s)
	if r.child > 0 {
		s.ChildPid = &r.child
	}
	return s
}

func utc(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

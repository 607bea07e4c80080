package core

import "time"

// hookState is what the machine knows of the shutdown hook (--on-shutdown):
// it is started once, at the first shutdown signal of a ready child, and
// holds the stop signal until it ends (Timeline.HookEnded).
type hookState struct {
	started   bool
	running   bool   // started and not reaped
	killedFor string // why it was killed: "timeout" or "hurry"; "" while it may run on
	startedAt time.Time
	endedAt   time.Time
	code      int
	outcome   HookOutcome
}

// HookReport is how the shutdown hook went, for the published status.
type HookReport struct {
	Outcome  HookOutcome   // "" when no hook was started
	Code     int           // valid once Ended
	Duration time.Duration // valid once Ended
	Ended    bool          // reaped (an unkillable hook never is)
}

// Hook reports on the shutdown hook.
func (m *Machine) Hook() HookReport {
	h := m.hook
	if !h.started {
		return HookReport{}
	}
	if h.running {
		return HookReport{Outcome: m.runningOutcome()}
	}
	return HookReport{Outcome: h.outcome, Code: h.code, Duration: h.endedAt.Sub(h.startedAt), Ended: true}
}

// runningOutcome is a live hook's outcome: running until it is killed,
// then what it was killed for.
func (m *Machine) runningOutcome() HookOutcome {
	switch m.hook.killedFor {
	case "timeout":
		return HookTimedOut
	case "hurry":
		return HookCutShort
	}
	return HookRunning
}

// startHook asks for the hook when the shutdown's timeline has one (a
// ready child with --on-shutdown).
func (m *Machine) startHook(now time.Time, acts []Action) []Action {
	if m.timeline.HookDeadline.IsZero() || m.hook.started {
		return acts
	}
	m.hook.started, m.hook.running, m.hook.startedAt = true, true, now
	return append(acts, Action{Kind: ActStartHook})
}

// killHook asks for the hook's process group to be killed, for why.
func (m *Machine) killHook(now time.Time, why string, acts []Action) []Action {
	if !m.hook.running || m.hook.killedFor != "" {
		return acts
	}
	m.hook.killedFor = why
	m.timeline = m.timeline.HookEnded(m.opt.Budget, now)
	return append(acts, Action{Kind: ActKillHook, Why: why})
}

// hookHolds reports whether the hook may still hold the stop signal.
func (m *Machine) hookHolds() bool { return m.hook.running && m.hook.killedFor == "" }

// hookDue kills the hook at its timeout.
func (m *Machine) hookDue(now time.Time, acts []Action) []Action {
	if m.hookHolds() && !now.Before(m.timeline.HookDeadline) {
		return m.killHook(now, "timeout", acts)
	}
	return acts
}

// HookExited records the hook's exit code at now (128+N for signal N;
// 126/127 when it could not be started). It never changes lfinit's exit
// code; the stop signal, if the hook held it, is due now.
func (m *Machine) HookExited(now time.Time, code int) []Action {
	if !m.hook.running {
		return nil
	}
	m.hook.running, m.hook.endedAt, m.hook.code = false, now, code
	m.hook.outcome = m.runningOutcome()
	if m.hook.outcome == HookRunning {
		m.hook.outcome = HookSucceeded
		if code != 0 {
			m.hook.outcome = HookFailed
		}
	}
	if m.done {
		return nil
	}
	m.timeline = m.timeline.HookEnded(m.opt.Budget, now)
	return m.advance(now, nil)
}

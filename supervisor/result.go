package supervisor

import (
	"time"

	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/reaper"
	"github.com/light-fabric/lfinit/statusfile"
)

// Result is how a run ended: lfinit's exit code and the final status,
// with what the final records need beside them.
type Result struct {
	Code   int
	Status statusfile.Status // the final snapshot: phase stopped, outcome set
	// Start is when the run started and SignalAt when the first shutdown
	// signal came (zero without one), with their monotonic readings, so
	// that durations measured from them are not moved by a clock step.
	Start, SignalAt time.Time
	Leftovers       int  // processes the child left behind that got SIGTERM
	Interactive     bool // the child was given the terminal's foreground
}

// result is the run's Result, once the machine said exit; the metrics'
// readiness is down by then whatever the last phase said.
func (r *runner) result() Result {
	r.status.setReady(false)
	return r.resultOf(r.m, r.code)
}

// resultOf is the Result that m and code say, with the run's counts and
// the tree's usage; it changes nothing.
func (r *runner) resultOf(m *core.Machine, code int) Result {
	res := Result{Code: code, Status: r.snapshotOf(m), Start: r.status.start, Leftovers: r.tree.leftovers, Interactive: r.interactive}
	if u, err := reaper.TreeUsage(); err == nil && r.child > 0 {
		cpu := (u.User + u.System).Seconds()
		res.Status.TreePeakRSSBytes, res.Status.TreeCPUSeconds = &u.PeakRSS, &cpu
	}
	if m.ShuttingDown() {
		res.SignalAt = m.Timeline().SignalAt
	}
	return res
}

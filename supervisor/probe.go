package supervisor

import (
	"fmt"
	"log/slog"

	"github.com/light-fabric/lfinit/readiness"
	"github.com/light-fabric/lfinit/statusfile"
)

// probeState is what the readiness check last reported.
type probeState struct {
	reports <-chan readiness.Report // nil without a check
	err     string                  // why the last attempt failed; "" once it passed
}

// probeReport takes a report of the readiness check: its reason goes into
// the status file (ready_error), and a due reminder into the log at INFO,
// so that a child that never answers is seen at the default level.
func (r *runner) probeReport(rep readiness.Report) {
	if r.m.Phase() != statusfile.Starting {
		return // a report sent as the phase moved on is no news
	}
	if rep.Err != r.probe.err {
		r.probe.err, r.status.unpublished = rep.Err, true
	}
	if !rep.Remind {
		return
	}
	r.status.unpublished = true // updated_at says the check still runs
	r.logLine(slog.LevelInfo, fmt.Sprintf("still starting: %s (%d s)", rep.Err, int(rep.Waited.Seconds())),
		"check", r.Readiness.String(), "waited_seconds", seconds(rep.Waited))
}

// lastError is the probe error for the status file: null when there is none.
func (p *probeState) lastError() *string {
	if p.err == "" {
		return nil
	}
	e := p.err
	return &e
}

package supervisor

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/budget"
	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/readiness"
)

func TestProbeReports(t *testing.T) {
	var log bytes.Buffer
	r := &runner{m: core.NewMachine(core.Options{Budget: budget.Default()})}
	r.Log = slog.New(slog.NewTextHandler(&log, nil)) // INFO, the default level
	r.Readiness = &readiness.Check{TCP: "127.0.0.1:8080"}
	why := "127.0.0.1:8080 refuses connections"

	r.probeReport(readiness.Report{Err: why, Waited: time.Millisecond})
	if e := r.probe.lastError(); e == nil || *e != why || !r.status.unpublished || log.Len() != 0 {
		t.Fatalf("a new reason: ready_error %v, unpublished %v, log %q; want it published, not logged", e, r.status.unpublished, log.String())
	}
	r.probeReport(readiness.Report{Err: why, Waited: 12 * time.Second, Remind: true})
	if line := log.String(); !strings.Contains(line, `level=INFO msg="still starting: `+why+` (12 s)"`) || !strings.Contains(line, "waited_seconds=12") {
		t.Fatalf("the reminder: %q", line)
	}
	r.probeReport(readiness.Report{Waited: 13 * time.Second}) // the check passed
	if e := r.probe.lastError(); e != nil {
		t.Fatalf("ready_error %q once the check passed, want null", *e)
	}
}

package rollout

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRollingRestart is the promise behind --drain-delay: with a drain
// delay longer than HAProxy's detection time, a rolling restart loses no
// request. The run without a drain delay is measured and logged, not judged.
func TestRollingRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("a rolling restart behind HAProxy takes about 20s; skipped with -short")
	}
	if _, err := FindHAProxy(); err != nil {
		t.Skip(err.Error())
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bins, err := Build(root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base := Config{Inter: 200 * time.Millisecond, Fall: 2}
	noDrain := base
	noDrain.Name = "no drain delay"
	withDrain := base
	withDrain.Name = "drain delay 1s"
	withDrain.DrainDelay = time.Second
	if withDrain.DrainDelay <= withDrain.Detection() {
		t.Fatalf("the drain delay %v must exceed HAProxy's detection time %v", withDrain.DrainDelay, withDrain.Detection())
	}

	var table []string
	for _, c := range []Config{noDrain, withDrain} {
		dir := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		res, err := Run(ctx, bins, dir, c, t.Logf)
		cancel()
		if err != nil {
			logFiles(t, dir)
			t.Fatalf("%s: %v", c.Name, err)
		}
		table = append(table, formatRow(res))
		for i, code := range res.Exits {
			if code != 0 {
				logFiles(t, dir)
				t.Errorf("%s: stop %d: lfinit exited %d, want 0 (the server exits 0 on SIGTERM well inside the grace)", c.Name, i+1, code)
			}
		}
		if c.DrainDelay > 0 && res.Failed > 0 {
			logFiles(t, dir)
			t.Errorf("%s: %d of %d requests failed (%s); want none with a drain delay (%v) longer than HAProxy's detection time (%v)",
				c.Name, res.Failed, res.Requests, res.KindsString(), c.DrainDelay, res.Config.Detection())
		}
	}
	t.Logf("rolling restart, 2 instances behind HAProxy:\n| configuration | detection | requests | failed | failures | p99 | max |\n%s", strings.Join(table, "\n"))
}

// formatRow is one line of the table the test logs.
func formatRow(r Result) string {
	return "| " + r.Config.Name + " | " + r.Config.Detection().String() + " | " +
		strconv.FormatInt(r.Requests, 10) + " | " + strconv.FormatInt(r.Failed, 10) + " | " + r.KindsString() + " | " +
		r.P99.Round(time.Millisecond).String() + " | " + r.Max.Round(time.Millisecond).String() + " |"
}

// logFiles shows HAProxy's and each lfinit's log, for a failed run.
func logFiles(t *testing.T, dir string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// HAProxy logs every request; the end is what matters.
		if len(b) > 16<<10 {
			b = b[len(b)-16<<10:]
		}
		t.Logf("%s:\n%s", filepath.Base(p), b)
	}
}

package metrics

import (
	"testing"

	"github.com/light-fabric/lfinit/statusfile"
)

func TestHookSeriesOnlyOnceReaped(t *testing.T) {
	m := New(BuildInfo{}, Sources{})
	running := statusfile.HookRunning
	m.Status(statusfile.Status{Phase: statusfile.Quiescing, HookOutcome: &running})
	for _, name := range []string{"lfinit_shutdown_hook_outcome", "lfinit_shutdown_hook_exit_code", "lfinit_shutdown_hook_duration_seconds"} {
		if s := series(t, m, name); len(s) != 0 {
			t.Fatalf("%s exported while the hook runs: %v", name, s)
		}
	}
	out, code, secs := statusfile.HookTimedOut, 137, 1.5
	m.Status(statusfile.Status{Phase: statusfile.Draining, HookOutcome: &out, HookExitCode: &code, HookDurationSeconds: &secs})
	checkStateSet(t, "lfinit_shutdown_hook_outcome", series(t, m, "lfinit_shutdown_hook_outcome"), statusfile.HookOutcomes, out)
	if v := value(t, m, "lfinit_shutdown_hook_exit_code"); v != 137 {
		t.Fatalf("exit code %v", v)
	}
	if v := value(t, m, "lfinit_shutdown_hook_duration_seconds"); v != 1.5 {
		t.Fatalf("duration %v", v)
	}
}

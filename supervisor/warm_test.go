package supervisor

import (
	"bytes"
	"log/slog"
	"os"
	"testing"

	"github.com/light-fabric/lfinit/statusfile"
)

// settledRunner is a testRunner whose child and self are this test
// process, so that the warm path's signal 0 and SIGCHLD (ignored) reach
// nothing else, with Rehearse's results kept in got.
func settledRunner(t *testing.T, log *bytes.Buffer, got *[]Result) *runner {
	t.Helper()
	r := testRunner(&fakeTree{}, slog.LevelDebug, log)
	r.self, r.child = os.Getpid(), os.Getpid()
	r.Rehearse = func(res Result) { *got = append(*got, res) }
	r.status.publishers = []Publish{func(s statusfile.Status) { t.Errorf("published %s during the settle", s.Phase) }}
	return r
}

// TestSettleRehearsesAGracefulStop: once the child has run a while, the
// final records are rehearsed with the result a graceful stop by SIGTERM
// would have, while the run itself stays ready, unpublished and unlogged.
func TestSettleRehearsesAGracefulStop(t *testing.T) {
	var log bytes.Buffer
	var got []Result
	r := settledRunner(t, &log, &got)
	r.settle()
	if len(got) != 1 {
		t.Fatalf("Rehearse called %d times, want once", len(got))
	}
	s := got[0].Status
	if s.Phase != statusfile.Stopped || s.Outcome == nil || *s.Outcome != statusfile.Graceful ||
		s.ExitCode == nil || *s.ExitCode != 143 || got[0].Code != 143 {
		t.Errorf("rehearsed phase %s, outcome %v, exit %v, code %d: want a graceful stop exiting 143",
			s.Phase, s.Outcome, s.ExitCode, got[0].Code)
	}
	if s.Signal == nil || *s.Signal != "SIGTERM" || got[0].SignalAt.IsZero() {
		t.Errorf("rehearsed signal %v at %v, want SIGTERM at a time", deref(s.Signal), got[0].SignalAt)
	}
	if r.m.Phase() != statusfile.Ready || r.m.ShuttingDown() {
		t.Errorf("the run is %s (shutting down: %v) after the settle, want ready", r.m.Phase(), r.m.ShuttingDown())
	}
	if log.Len() != 0 {
		t.Errorf("the settle logged %q", log.String())
	}
}

// TestNoSettleOnceStopping: a settle due after a shutdown began or after
// the child was reaped rehearses nothing (and gives nothing back).
func TestNoSettleOnceStopping(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(r *runner)
	}{
		{"shutting down", func(r *runner) { r.m.Signal(r.status.start, 15) }},
		{"child reaped", func(r *runner) { r.reaped = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			var got []Result
			r := settledRunner(t, &log, &got)
			r.status.publishers = nil
			tc.end(r)
			r.settle()
			if len(got) != 0 {
				t.Errorf("Rehearse called %d times, want none", len(got))
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

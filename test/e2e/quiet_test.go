package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// defaultLevel leaves the log level at lfinit's default (an empty variable
// counts as unset), instead of the harness's debug.
var defaultLevel = []string{"LFINIT_LOG_LEVEL="}

// logLines is lfinit's stderr, a line each.
func logLines(r *run) []string {
	return strings.Split(strings.TrimSpace(r.stderr.String()), "\n")
}

// TestQuietByDefault: like tini and catatonit, a normal start and stop
// print nothing but the final summary (with why and how it ended), and
// everything abnormal is at WARN or ERROR.
func TestQuietByDefault(t *testing.T) {
	long(t)
	t.Parallel()
	t.Run("graceful", func(t *testing.T) {
		t.Parallel()
		r := startWith(t, true, []string{"HELPER", "-ready-file", "DIR/ready"}, defaultLevel)
		r.waitFile("ready")
		r.signal(syscall.SIGTERM)
		r.wait(10 * time.Second)
		lines := logLines(r)
		if len(lines) != 1 {
			t.Fatalf("%d lines, want only the final summary:\n%s", len(lines), r.stderr.String())
		}
		for _, want := range []string{"level=INFO", "msg=exit", "outcome=graceful", "exit_code=143", "reason=terminate", "signal=SIGTERM", "shutdown_duration_seconds="} {
			if !strings.Contains(lines[0], want) {
				t.Errorf("final line lacks %s: %s", want, lines[0])
			}
		}
	})
	t.Run("child-exited", func(t *testing.T) {
		t.Parallel()
		r := startWith(t, false, []string{"HELPER", "-exit", "3"}, defaultLevel)
		if got := r.wait(10 * time.Second); got != 3 {
			t.Fatalf("exit %d", got)
		}
		if lines := logLines(r); len(lines) != 1 || !strings.Contains(lines[0], "level=INFO") || !strings.Contains(lines[0], "reason=child-exit") {
			t.Fatalf("want one INFO summary with reason=child-exit:\n%s", r.stderr.String())
		}
	})
	t.Run("deadline-exceeded", func(t *testing.T) {
		t.Parallel()
		r := startWith(t, true, []string{"--grace", "500ms", "HELPER", "-ignore", "15", "-ready-file", "DIR/ready"}, defaultLevel)
		r.waitFile("ready")
		r.signal(syscall.SIGTERM)
		if got := r.wait(10 * time.Second); got != 1 {
			t.Fatalf("exit %d, want 1", got)
		}
		log := r.stderr.String()
		for _, want := range []string{"level=WARN msg=\"deadline signal sent\"", "level=WARN msg=\"hard deadline: killed the process tree\"", "level=WARN msg=exit", "outcome=deadline-exceeded"} {
			if !strings.Contains(log, want) {
				t.Errorf("log lacks %s", want)
			}
		}
		if strings.Contains(log, "level=INFO") {
			t.Errorf("an abnormal stop logged at INFO:\n%s", log)
		}
	})
	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		r := startWith(t, true, []string{"--", "/no/such/program"}, defaultLevel)
		if got := r.wait(10 * time.Second); got != 127 {
			t.Fatalf("exit %d", got)
		}
		if log := r.stderr.String(); strings.Contains(log, "level=INFO") || !strings.Contains(log, "level=ERROR msg=exit") || !strings.Contains(log, "outcome=failed") {
			t.Fatalf("want ERROR lines only:\n%s", log)
		}
	})
}

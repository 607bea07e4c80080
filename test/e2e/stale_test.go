package e2e

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/statusfile"
)

// subcommand runs lfinit SUBCOMMAND ARGS... and returns its exit code and output.
func subcommand(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(lfinitBin, args...)
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestStaleStatusFile SIGKILLs lfinit while its status file says ready:
// lfinit status and lfinit probe must say that the lfinit that wrote it is
// gone, both for a PID 1 in its own namespace read from outside it (the
// pid in the file is 1, which here is alive: systemd) and for a subreaper
// whose pid is simply gone.
func TestStaleStatusFile(t *testing.T) {
	t.Parallel()
	for _, pid1 := range []bool{true, false} {
		r := start(t, pid1, []string{"--status-file", "DIR/status.json", "HELPER", "-ready-file", "DIR/ready"})
		status := r.path("status.json")
		waitPhase(t, status, statusfile.Ready)
		// Alive: the writer is found, in its namespace or by its pid.
		if code, out := subcommand(t, "status", "--status-file", status); code != 0 || strings.Contains(out, "STALE") {
			t.Fatalf("pid1=%v: status of a running lfinit: exit %d\n%s", pid1, code, out)
		}
		if code, out := subcommand(t, "status", "--json", "--status-file", status); code != 0 || !strings.Contains(out, `"ready": true`) || !strings.Contains(out, `"stale": false`) {
			t.Fatalf("pid1=%v: status --json of a running lfinit: exit %d\n%s", pid1, code, out)
		}
		if probe(t, "ready", status) != 0 {
			t.Fatalf("pid1=%v: probe ready of a running lfinit failed", pid1)
		}
		child := 0
		if !pid1 {
			// The helper outlives a SIGKILLed subreaper, holding lfinit's
			// stderr: it is the test's to kill.
			if p := readStatus(t, status).ChildPid; p != nil {
				child = *p
			}
		}
		r.signal(syscall.SIGKILL)
		if child > 0 {
			syscall.Kill(child, syscall.SIGKILL)
		}
		r.wait(5 * time.Second)
		if s := readStatus(t, status); s.Phase != statusfile.Ready {
			t.Fatalf("pid1=%v: the file should still say ready, says %s", pid1, s.Phase)
		}
		code, out := subcommand(t, "status", "--status-file", status)
		if code != 1 || !strings.Contains(out, "is gone") || !strings.Contains(out, "last phase was ready") || !strings.Contains(out, "ready:      false\n") {
			t.Errorf("pid1=%v: status of a SIGKILLed lfinit: exit %d, want 1 saying it is gone and not ready:\n%s", pid1, code, out)
		}
		// The JSON says the same: the last phase, marked stale and not ready.
		code, out = subcommand(t, "status", "--json", "--status-file", status)
		for _, want := range []string{`"phase": "ready"`, `"ready": false`, `"stale": true`, `"stale_reason": "the lfinit that wrote this file`} {
			if code != 1 || !strings.Contains(out, want) {
				t.Errorf("pid1=%v: status --json: exit %d, want 1 and %s:\n%s", pid1, code, want, out)
			}
		}
		for _, kind := range []string{"ready", "live"} {
			if code, out := subcommand(t, "probe", kind, "--status-file", status); code != 1 || !strings.Contains(out, "is gone") {
				t.Errorf("pid1=%v: probe %s of a SIGKILLed lfinit: exit %d:\n%s", pid1, kind, code, out)
			}
		}
	}
}

// TestFailedPushChangesNothing points the push at a port nobody listens
// on: lfinit as PID 1 still exits with the child's code, one WARN line
// says the push failed, and the push costs at most its timeout.
func TestFailedPushChangesNothing(t *testing.T) {
	long(t)
	t.Parallel()
	r := startPID1(t, "--push-gateway", "http://127.0.0.1:1", "--push-timeout", "400ms", "--log-format", "json",
		"HELPER", "-exit", "3", "-after", "100ms")
	if got := r.wait(10 * time.Second); got != 3 {
		t.Fatalf("exit %d, want the child's 3", got)
	}
	log := r.stderr.String()
	if n := strings.Count(log, "cannot push the final metrics"); n != 1 || !strings.Contains(log, `"level":"WARN","msg":"cannot push`) {
		t.Errorf("want one WARN line about the push, got %d:\n%s", n, log)
	}
	// 100ms of child, the floor for leftovers (none), at most 400ms of push.
	between(t, "the run", r.took, 100*time.Millisecond, 3*time.Second)
}

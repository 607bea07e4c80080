package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
	"github.com/light-fabric/lfinit/statusfile"
)

// TestFastStopWritesEveryRecord: lfinit writes its last records in line
// and exits the moment the tree is gone; a child that dies at once on
// SIGTERM must still leave every one of them: the status file at stopped
// with the outcome, the termination message, and the log with the final
// summary last, after every line queued before it, in order.
func TestFastStopWritesEveryRecord(t *testing.T) {
	long(t)
	for _, level := range []string{"debug", "info"} {
		t.Run(level, func(t *testing.T) {
			t.Parallel()
			for range 10 {
				fastStop(t, level)
			}
		})
	}
}

// fastStop is one run of TestFastStopWritesEveryRecord.
func fastStop(t *testing.T, level string) {
	t.Helper()
	r := startWith(t, true, []string{"--status-file", "DIR/status.json", "--termination-log", "DIR/termination-log", "--", "sleep", "1000"},
		[]string{"LFINIT_LOG_LEVEL=" + level})
	waitPhase(t, r.path("status.json"), statusfile.Ready)
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d, want 143 (sleep's death by SIGTERM)", got)
	}
	s := readStatus(t, r.path("status.json"))
	if s.Phase != statusfile.Stopped || s.Outcome == nil || *s.Outcome != statusfile.Graceful || s.ExitCode == nil || *s.ExitCode != 143 {
		t.Fatalf("status file not at its final state: phase %s, outcome %v", s.Phase, s.Outcome)
	}
	msg, err := os.ReadFile(r.path("termination-log"))
	if err != nil || !strings.Contains(string(msg), "outcome=graceful exit_code=143") {
		t.Fatalf("termination message %q (%v)", msg, err)
	}
	checkDurations(t, string(msg))
	lines := logLines(r)
	last := lines[len(lines)-1]
	if !strings.Contains(last, "msg=exit") || !strings.Contains(last, "outcome=graceful") {
		t.Fatalf("the final summary is not the last line:\n%s", r.stderr.String())
	}
	if level == "debug" {
		inOrder(t, r.stderr.String(), "msg=started", "phase=ready", `msg="stop signal sent"`, "phase=draining", `msg="child exited"`, "phase=stopped", "msg=exit")
	}
}

// durationsRE finds the two durations of a termination message.
var durationsRE = regexp.MustCompile(` run_duration=(\S+) shutdown_duration=(\S+)( |$)`)

// checkDurations fails unless the termination message of a stop names the
// whole run and the shutdown (from the signal), the shutdown within the run.
func checkDurations(t *testing.T, msg string) {
	t.Helper()
	m := durationsRE.FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("termination message %q: want run_duration= and shutdown_duration=", msg)
	}
	run, err1 := time.ParseDuration(m[1])
	shutdown, err2 := time.ParseDuration(m[2])
	if err1 != nil || err2 != nil || shutdown > run || run <= 0 {
		t.Fatalf("termination message %q: run %v, shutdown %v", msg, run, shutdown)
	}
}

// inOrder fails unless every one of texts is in log, each after the one before.
func inOrder(t *testing.T, log string, texts ...string) {
	t.Helper()
	at := 0
	for _, s := range texts {
		i := strings.Index(log[at:], s)
		if i < 0 {
			t.Fatalf("%s missing, or out of order:\n%s", s, log)
		}
		at += i + len(s)
	}
}

// TestExitDoesNotWaitForAFullStderr: a stderr pipe that is full and never
// read (the final line cannot be written) does not keep lfinit from
// exiting with the child's code: the line is dropped, not waited for.
func TestExitDoesNotWaitForAFullStderr(t *testing.T) {
	needRoot(t)
	for _, level := range []string{"debug", "info"} {
		t.Run(level, func(t *testing.T) {
			t.Parallel()
			rd, wr, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			if err := measure.FillPipe(wr); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc", lfinitBin, "--log-level", level, "--", "sleep", "0.3")
			cmd.Stderr = wr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			wr.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if cmd.ProcessState.ExitCode() != 0 {
					t.Fatalf("exit %v, want sleep's 0", err)
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatal("lfinit did not exit: it waited on its full stderr")
			}
		})
	}
}

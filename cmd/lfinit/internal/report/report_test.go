package report

import (
	"strings"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/statusfile"
)

func TestDescribeDuringDrain(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 10, 0, time.UTC)
	since, sig := now.Add(-2*time.Second), now.Add(-3*time.Second)
	grace, hard := now.Add(5*time.Second), now.Add(5250*time.Millisecond)
	child, reason, name := 7, "terminate", "SIGTERM"
	s := statusfile.Status{Version: statusfile.Version, Phase: statusfile.Draining, Pid: 1, ChildPid: &child, Reason: &reason, Signal: &name,
		SignalAt: &sig, GraceDeadline: &grace, HardDeadline: &hard, PhaseSince: since, UpdatedAt: now}
	out := Describe(s, now)
	for _, want := range []string{"phase:      draining (for 2s)", "ready:      false", "child pid:  7", "reason:     terminate (SIGTERM)", "grace:      in 5s", "hard:       in 5.25s"} {
		if !strings.Contains(out, want) {
			t.Errorf("Describe lacks %q:\n%s", want, out)
		}
	}
	past := now.Add(6 * time.Second)
	if out := Describe(s, past); !strings.Contains(out, "grace:      passed 1s ago") {
		t.Errorf("after the grace deadline:\n%s", out)
	}
}

func TestDescribeStopped(t *testing.T) {
	now := time.Now()
	o, code := statusfile.DeadlineExceeded, 1
	s := statusfile.Status{Phase: statusfile.Stopped, Outcome: &o, ExitCode: &code, Killed: 2, StillRunning: []string{"app[7]", "worker[9]"}, PhaseSince: now, UpdatedAt: now}
	out := Describe(s, now)
	for _, want := range []string{"outcome:    deadline-exceeded", "exit code:  1", "killed:     2", "app[7], worker[9]"} {
		if !strings.Contains(out, want) {
			t.Errorf("Describe lacks %q:\n%s", want, out)
		}
	}
}

func TestDescribeSender(t *testing.T) {
	now := time.Now()
	reason, sig, kind, pid := "terminate", "SIGTERM", "process", 42
	s := statusfile.Status{Phase: statusfile.Draining, Reason: &reason, Signal: &sig, SignalSender: &kind, SignalSenderPid: &pid, PhaseSince: now, UpdatedAt: now}
	if out := Describe(s, now); !strings.Contains(out, "reason:     terminate (SIGTERM) from pid 42\n") {
		t.Errorf("a sender without its command:\n%s", out)
	}
	outside := "outside-pid-namespace"
	s.SignalSender, s.SignalSenderPid = &outside, nil
	if out := Describe(s, now); !strings.Contains(out, "reason:     terminate (SIGTERM) from outside-pid-namespace\n") {
		t.Errorf("a sender outside the namespace:\n%s", out)
	}
}

func TestDescribeStartingWithAReadyError(t *testing.T) {
	now := time.Now()
	why := "127.0.0.1:8080 refuses connections"
	s := statusfile.Status{Phase: statusfile.Starting, ReadyError: &why, PhaseSince: now, UpdatedAt: now}
	if out := Describe(s, now); !strings.Contains(out, "ready error: "+why+"\n") {
		t.Errorf("Describe lacks the last probe error:\n%s", out)
	}
	s.ReadyError = nil
	if out := Describe(s, now); strings.Contains(out, "ready error") {
		t.Errorf("Describe without a probe error:\n%s", out)
	}
}

func TestProbes(t *testing.T) {
	alive := func(pid int) bool { return pid == 1 }
	for _, tc := range []struct {
		s           statusfile.Status
		ready, live bool
	}{
		{statusfile.Status{Phase: statusfile.Starting, Pid: 1}, false, true},
		{statusfile.Status{Phase: statusfile.Ready, Ready: true, Pid: 1}, true, true},
		{statusfile.Status{Phase: statusfile.Quiescing, Pid: 1}, false, true},
		{statusfile.Status{Phase: statusfile.Draining, Pid: 1}, false, true},
		{statusfile.Status{Phase: statusfile.CleaningUp, Pid: 1}, false, true},
		{statusfile.Status{Phase: statusfile.Stopped, Pid: 1}, false, false},
		{statusfile.Status{Phase: statusfile.Ready, Ready: true, Pid: 42}, false, false}, // its writer is gone
	} {
		if got := ProbeReady(tc.s, alive); got != tc.ready {
			t.Errorf("ProbeReady(%s) = %v", tc.s.Phase, got)
		}
		if got := ProbeLive(tc.s, alive); got != tc.live {
			t.Errorf("ProbeLive(%s, pid %d) = %v", tc.s.Phase, tc.s.Pid, got)
		}
	}
}

func TestDescribeService(t *testing.T) {
	state, status, at := "ready", "Serving 3 workers", time.Unix(1000, 0).UTC()
	s := statusfile.Status{Phase: statusfile.Ready, ServiceState: &state, ServiceStatus: &status, WatchdogMissedAt: &at}
	got := Describe(s, time.Unix(1001, 0))
	for _, want := range []string{"service:    ready\n", "status:     Serving 3 workers\n", "watchdog:   missed at 1970-01-01T00:16:40Z\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if ProbeLive(s, func(int) bool { return true }) {
		t.Error("probe live passed with the watchdog missed")
	}
}

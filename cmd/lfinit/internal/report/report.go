// Package report is the readers' side of lfinit's status file, for
// `lfinit status` and `lfinit probe`: the human summary, the probes' rules,
// and whether the lfinit that wrote the file still runs.
package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/light-fabric/lfinit/statusfile"
)

// Describe is the human-readable summary `lfinit status` prints: the phase
// and how long lfinit has been in it, the time left to each deadline, and
// the outcome once known.
func Describe(s statusfile.Status, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase:      %s (for %s)\n", s.Phase, round(now.Sub(s.PhaseSince)))
	fmt.Fprintf(&b, "ready:      %v\n", s.Ready)
	if s.ReadyError != nil {
		fmt.Fprintf(&b, "ready error: %s\n", *s.ReadyError)
	}
	describeService(&b, s)
	fmt.Fprintf(&b, "lfinit pid: %d\n", s.Pid)
	if s.ChildPid != nil {
		fmt.Fprintf(&b, "child pid:  %d\n", *s.ChildPid)
	}
	if s.Reason != nil {
		sig := ""
		if s.Signal != nil {
			sig = " (" + *s.Signal + ")"
		}
		if who := s.SenderName(); who != "" {
			sig += " from " + who
		}
		fmt.Fprintf(&b, "reason:     %s%s\n", *s.Reason, sig)
	}
	if s.SignalAt != nil {
		fmt.Fprintf(&b, "signal at:  %s (%s ago)\n", s.SignalAt.Format(time.RFC3339Nano), round(now.Sub(*s.SignalAt)))
	}
	running := s.Outcome == nil
	for _, d := range []struct {
		name string
		at   *time.Time
	}{{"grace", s.GraceDeadline}, {"hard", s.HardDeadline}} {
		if d.at == nil {
			continue
		}
		left := d.at.Sub(now)
		switch {
		case !running:
			fmt.Fprintf(&b, "%-11s %s\n", d.name+":", d.at.Format(time.RFC3339Nano))
		case left > 0:
			fmt.Fprintf(&b, "%-11s in %s (%s)\n", d.name+":", round(left), d.at.Format(time.RFC3339Nano))
		default:
			fmt.Fprintf(&b, "%-11s passed %s ago\n", d.name+":", round(-left))
		}
	}
	if s.Outcome != nil {
		fmt.Fprintf(&b, "outcome:    %s\n", *s.Outcome)
	}
	if s.ExitCode != nil {
		fmt.Fprintf(&b, "exit code:  %d\n", *s.ExitCode)
	}
	fmt.Fprintf(&b, "reaped:     %d\nkilled:     %d\n", s.Reaped, s.Killed)
	if len(s.StillRunning) > 0 {
		fmt.Fprintf(&b, "killed at the hard deadline: %s\n", strings.Join(s.StillRunning, ", "))
	}
	fmt.Fprintf(&b, "updated:    %s ago\n", round(now.Sub(s.UpdatedAt)))
	return b.String()
}

// describeService adds what the service said over the notify protocol
// (--ready-notify), when it is heard.
func describeService(b *strings.Builder, s statusfile.Status) {
	if s.ServiceState != nil {
		fmt.Fprintf(b, "service:    %s\n", *s.ServiceState)
	}
	if s.ServiceStatus != nil {
		fmt.Fprintf(b, "status:     %s\n", *s.ServiceStatus)
	}
	if s.ServiceErrno != nil {
		fmt.Fprintf(b, "errno:      %d\n", *s.ServiceErrno)
	}
	if s.ServiceBusError != nil {
		fmt.Fprintf(b, "buserror:   %s\n", *s.ServiceBusError)
	}
	if s.WatchdogMissedAt != nil {
		fmt.Fprintf(b, "watchdog:   missed at %s\n", s.WatchdogMissedAt.Format(time.RFC3339Nano))
	}
}

// ProbeReady is the answer of `lfinit probe ready`: the child is serving,
// no shutdown has begun, and the lfinit that said so still runs (a status
// file left by a dead lfinit must not say ready).
func ProbeReady(s statusfile.Status, alive func(pid int) bool) bool {
	return s.Phase == statusfile.Ready && s.Ready && ProbeLive(s, alive)
}

// ProbeLive is the answer of `lfinit probe live`: the lfinit that wrote s
// still runs (alive reports whether a pid exists), has not stopped, and
// the service's watchdog (--watchdog), if any, is fed.
func ProbeLive(s statusfile.Status, alive func(pid int) bool) bool {
	return s.Phase != statusfile.Stopped && s.Pid > 0 && alive(s.Pid) && s.WatchdogMissedAt == nil
}

func round(d time.Duration) time.Duration {
	if d < 0 {
		d = 0
	}
	return d.Round(time.Millisecond)
}

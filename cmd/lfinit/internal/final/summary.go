package final

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/light-fabric/lfinit/internal/logline"
	"github.com/light-fabric/lfinit/statusfile"
	"github.com/light-fabric/lfinit/supervisor"
)

// Summary is the final log line's fields at end: what an SRE queries for.
func Summary(res supervisor.Result, end time.Time) []any {
	s := res.Status
	attrs := []any{"outcome", string(deref(s.Outcome)), "exit_code", res.Code}
	if s.Reason != nil {
		attrs = append(attrs, "reason", *s.Reason)
	}
	if s.Signal != nil {
		attrs = append(attrs, "signal", *s.Signal)
	}
	attrs = appendSender(attrs, s)
	attrs = append(attrs, "duration_seconds", logline.Seconds(end.Sub(res.Start)))
	if !res.SignalAt.IsZero() {
		attrs = append(attrs, "shutdown_duration_seconds", logline.Seconds(end.Sub(res.SignalAt)))
	}
	attrs = append(attrs, "killed", s.Killed, "leftovers", res.Leftovers, "reaped", s.Reaped)
	if s.NotSignalled > 0 {
		attrs = append(attrs, "not_signalled", s.NotSignalled)
	}
	if s.ServiceStatus != nil {
		attrs = append(attrs, "service_status", *s.ServiceStatus)
	}
	attrs = appendCost(attrs, s)
	attrs = append(attrs, "pid", s.Pid)
	if s.ChildPid != nil {
		attrs = append(attrs, "child_pid", *s.ChildPid)
	}
	return attrs
}

// appendSender adds who sent the first shutdown signal, where recorded.
func appendSender(attrs []any, s statusfile.Status) []any {
	if s.SignalSender == nil {
		return attrs
	}
	attrs = append(attrs, "signal_sender", *s.SignalSender)
	if s.SignalSenderPid != nil {
		attrs = append(attrs, "signal_sender_pid", *s.SignalSenderPid)
	}
	if s.SignalSenderCommand != nil {
		attrs = append(attrs, "signal_sender_command", *s.SignalSenderCommand)
	}
	if s.SignalSenderUid != nil {
		attrs = append(attrs, "signal_sender_uid", *s.SignalSenderUid)
	}
	return attrs
}

// appendCost adds why the child ended and what it cost, where known.
func appendCost(attrs []any, s statusfile.Status) []any {
	if s.Cause != nil {
		attrs = append(attrs, "cause", string(*s.Cause))
	}
	if s.MemoryPeakBytes != nil {
		attrs = append(attrs, "memory_peak_bytes", *s.MemoryPeakBytes)
	}
	if s.MemoryLimitBytes != nil {
		attrs = append(attrs, "memory_limit_bytes", *s.MemoryLimitBytes)
	}
	if s.ChildPeakRSSBytes != nil {
		attrs = append(attrs, "child_peak_rss_bytes", *s.ChildPeakRSSBytes,
			"child_user_seconds", *s.ChildUserSeconds, "child_system_seconds", *s.ChildSystemSeconds)
	}
	if s.TreeCPUSeconds != nil {
		attrs = append(attrs, "tree_cpu_seconds", *s.TreeCPUSeconds, "tree_peak_rss_bytes", *s.TreePeakRSSBytes)
	}
	return attrs
}

// Level is the summary line's: INFO for a normal end, WARN for a forced
// one or one that had to kill, ERROR when the child could not be started.
// A normal end of an interactive run (the child had the terminal) is
// DEBUG: the terminal shows only the child's output, as under tini,
// dumb-init and catatonit.
func Level(res supervisor.Result) slog.Level {
	s := res.Status
	switch o := deref(s.Outcome); {
	case o == statusfile.Failed:
		return slog.LevelError
	case o == statusfile.DeadlineExceeded || s.Killed > 0 || s.NotSignalled > 0 || killedByOthers(s):
		return slog.LevelWarn
	case res.Interactive:
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// killedByOthers: the child died of a SIGKILL lfinit did not send.
func killedByOthers(s statusfile.Status) bool {
	if s.Cause == nil {
		return false
	}
	c := *s.Cause
	return c == statusfile.CauseOOMKill || c == statusfile.CauseKilledFromOutside || c == statusfile.CauseUnknown
}

func deref(o *statusfile.Outcome) statusfile.Outcome {
	if o == nil {
		return statusfile.Running
	}
	return *o
}

// withTimeout runs f and waits up to d for it; on timeout f is left behind
// (lfinit is about to exit).
func withTimeout(d time.Duration, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("timed out after %v", d)
	}
}

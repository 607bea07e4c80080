package supervisor

import (
	"errors"
	"log/slog"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/exitcode"
	"github.com/light-fabric/lfinit/reaper"
	"github.com/light-fabric/lfinit/spawn"
	"github.com/light-fabric/lfinit/statusfile"
)

// startHook starts the shutdown hook in a process group of its own (so
// that its timeout kills its whole tree), with the child's environment,
// the child's identity (--user: no more privilege than the service has)
// and lfinit's stdin, stdout and stderr. One that cannot start is a
// failed hook with 127 or 126, told to the machine at once.
func (r *runner) startHook() []core.Action {
	now := time.Now()
	pid, err := spawn.Start(r.Hook, spawn.Options{Env: r.Env, Credential: r.Credential})
	if err != nil {
		code := exitcode.NotExec
		var se *spawn.Error
		if errors.As(err, &se) {
			code = se.Code
		}
		r.status.unpublished = true
		r.logLine(slog.LevelWarn, "shutdown hook could not start", "cmd", r.Hook[0], "err", err.Error(), "exit_code", code)
		return r.m.HookExited(now, code)
	}
	r.hook, r.status.unpublished = pid, true
	if r.logsAt(slog.LevelDebug) {
		r.logLine(slog.LevelDebug, "shutdown hook started", "hook_pid", pid, "cmd", r.Hook[0], "timeout_seconds", seconds(r.Budget.Hook))
	}
	return nil
}

// killHook SIGKILLs the hook's process group, and the hook itself in case
// it left the group; what escapes both dies with the tree at the hard
// deadline.
func (r *runner) killHook(why string) {
	if r.hook <= 1 { // reaped already; and never kill(-1) or kill(0)
		return
	}
	_ = unix.Kill(-r.hook, unix.SIGKILL)
	_ = unix.Kill(r.hook, unix.SIGKILL)
	msg := "shutdown hook killed at its timeout"
	if why == "hurry" {
		msg = "shutdown hook killed: a second shutdown signal came"
	}
	r.logLine(slog.LevelWarn, msg, "hook_pid", r.hook, "cmd", r.Hook[0], "timeout_seconds", seconds(r.Budget.Hook))
}

// hookExited tells the machine the hook was reaped with status at now,
// and logs how it went: INFO when it succeeded, WARN otherwise.
func (r *runner) hookExited(now time.Time, status unix.WaitStatus) []core.Action {
	acts := r.m.HookExited(now, reaper.ExitCode(status))
	r.status.unpublished = true
	h := r.m.Hook()
	level := slog.LevelWarn
	if h.Outcome == statusfile.HookSucceeded {
		level = slog.LevelInfo
	}
	r.logLine(level, "shutdown hook ended", "outcome", string(h.Outcome), "exit_code", h.Code,
		"duration_seconds", seconds(h.Duration), "cmd", r.Hook[0])
	return acts
}

// hookStatus adds the hook's keys to a snapshot.
func (r *runner) hookStatus(s *statusfile.Status) {
	h := r.m.Hook()
	if h.Outcome == "" {
		return
	}
	s.HookOutcome = &h.Outcome
	if h.Ended {
		secs := h.Duration.Seconds()
		s.HookExitCode, s.HookDurationSeconds = &h.Code, &secs
	}
}

// Package supervisor is the loop that drives lfinit's decision core
// (core.Machine): it turns real signals, wait4's exits and timers into the
// machine's events, each with its instant, and carries out the actions that
// come back (forward, terminate or kill the tree, publish a phase, exit)
// with kill, the reaper and the status publishers.
package supervisor

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/budget"
	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/internal/logline"
	"github.com/light-fabric/lfinit/reaper"
	"github.com/light-fabric/lfinit/spawn"
	"github.com/light-fabric/lfinit/statusfile"
)

// runner is the thin syscall side of one run: it feeds events to the
// machine and carries out its actions.
type runner struct {
	Config
	m           *core.Machine
	self        int // lfinit's pid, read once: no syscall on the way out
	child       int
	reaped      bool            // the child is reaped: its pid may be recycled, never signal it
	code        int             // lfinit's exit code, once the machine said exit
	status      publishing      // the status's times and whether one is due (publish.go)
	tree        treeKill        // the tree's signals and kill, and their counts (treekill.go)
	tty         *spawn.Terminal // lfinit's controlling terminal, nil without one
	interactive bool            // the child was given the terminal's foreground
	jobControl  bool            // not PID 1 and on a terminal: stop when the child stops
	nreaped     int
	pidfile     pidfileState  // --pidfile's reads (daemon.go)
	pace        reapPace      // spaces out full reaps in a storm of orphans
	reapLater   bool          // a SIGCHLD waits for pace's next full reap
	exits       []reaper.Exit // the last reap's exits; its memory is reused (up to keptExits)
	probe       probeState    // the readiness check's reports (probe.go)
	hook        int           // the shutdown hook's pid until it is reaped (hook.go)
	end         ending        // how the main process ended (cause.go)
	sentKill    bool          // lfinit itself sent the main process SIGKILL
	service     serviceState  // the service's word, --ready-notify (notify.go)
	stopFrom    stopSender    // who sent the first shutdown signal (sender.go)
}

// Run starts the child and supervises it until lfinit must exit: the tree
// is reaped and the exit code fixed. It returns how the run ended, and
// writes none of the final records: that is the caller's.
func Run(c Config) Result {
	if c.Signals == nil {
		// A bug of the caller, not of the run: without handlers installed
		// before the child starts, a signal meanwhile would be lost or fatal.
		panic("supervisor.Run: no caught signals")
	}
	r := newRunner(c, time.Now())
	r.end.memory.start()
	if r.startOrFail() {
		return r.result()
	}
	var ready <-chan struct{}
	stopProbe := func() {}
	if c.Readiness != nil {
		ready, r.probe.reports, stopProbe = c.Readiness.Watch()
	}
	defer stopProbe()
	r.listen()
	// Zombies inherited from before lfinit started send no new SIGCHLD.
	if r.apply(r.m.Started(time.Now(), c.Readiness == nil && c.Notify == nil)) || r.apply(r.reap()) {
		return r.result()
	}
	_ = r.warmStopPath()
	r.loop(ready, stopProbe)
	return r.result()
}

// newRunner is a runner of c over the real tree, its run started at now.
func newRunner(c Config, now time.Time) *runner {
	return &runner{Config: c, m: core.NewMachine(c.Options), self: os.Getpid(),
		status: publishing{publishers: c.Publishers, recorder: c.Recorder, start: now, phaseSince: now},
		tree:   treeKill{send: reaper.SignalTree, kill: reaper.KillTree, pid1: c.PID1, log: c.Log}}
}

// loop feeds the machine its events (signals, exits, deadlines, the
// readiness check) until it says exit.
func (r *runner) loop(ready <-chan struct{}, stopProbe func()) {
	sigs, chld := r.Signals.relayed, r.Signals.chld
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	later := time.NewTimer(time.Hour) // the full reap a SIGCHLD put off
	later.Stop()
	dog := time.NewTimer(time.Hour) // the service's watchdog (--watchdog)
	dog.Stop()
	settled := time.NewTimer(settleAfter) // the start-up's pages given back (settle)
	defer settled.Stop()
	for {
		var acts []core.Action
		select {
		case s := <-sigs:
			acts = r.signal(s.(syscall.Signal))
		case <-chld:
			acts = r.childSignal()
		case <-later.C:
			signal.Notify(r.Signals.chld, syscall.SIGCHLD)
			acts = r.reap()
		case <-timer.C:
			acts = r.m.Tick(untilDue(r.m))
		case rep := <-r.probe.reports:
			r.probeReport(rep)
		case d := <-r.service.messages:
			acts = r.heard(d)
		case <-dog.C:
			r.service.dogArmed = time.Time{}
			acts = r.watchdogDue()
		case <-settled.C:
			r.settle()
		case <-ready:
			ready, r.service.probeReady = nil, true
			if r.service.word.GateOpen() {
				acts = r.m.MarkReady(time.Now())
			}
			if len(acts) > 0 {
				r.Log.Debug("child is ready", "check", r.Readiness.String(), "after_seconds", seconds(time.Since(r.status.start)))
			}
		}
		if ready != nil && r.m.Phase() != statusfile.Starting {
			stopProbe() // nothing left to gate
			ready = nil
		}
		if r.apply(acts) {
			return
		}
		r.armWatchdog(dog)
		if r.reapLater {
			r.reapLater = false
			later.Reset(time.Until(r.pace.Next()))
		}
		if next, ok := r.m.Next(); ok {
			timer.Reset(time.Until(next) - spinWindow)
		} else {
			timer.Stop()
		}
	}
}

// childSignal answers a SIGCHLD: a full reap, unless one ran too recently
// (see reapPace) and the child itself has not exited or stopped; then the
// full reap is put off until pace allows it.
func (r *runner) childSignal() []core.Action {
	if r.pace.Due(time.Now()) || (!r.reaped && reaper.Changed(r.child, r.jobControl)) {
		return r.reap()
	}
	r.reapLater = true
	// Until then SIGCHLD wakes nothing: the put-off reap sees every exit.
	signal.Stop(r.Signals.chld)
	return nil
}

// keptExits bounds the reap batch kept for reuse: room for an ordinary
// reap, not for a storm's.
const keptExits = 4096

// reap collects every exited process and tells the machine about the child.
func (r *runner) reap() []core.Action {
	var ws, hookWS unix.WaitStatus
	childDone, childStopped, hookDone := false, false, false
	n := 0
	start := time.Now()
	var empty bool
	watch := r.child
	if r.reaped {
		watch = 0
	}
	r.exits, empty = reaper.ReapWatch(r.jobControl, r.exits[:0], watch, &r.end.ru)
	for _, e := range r.exits {
		pid, status := e.Pid, e.Status
		if status.Stopped() {
			childStopped = childStopped || (pid == r.child && !r.reaped)
			continue
		}
		n++
		switch {
		case pid == r.child && !r.reaped:
			r.reaped, childDone, ws = true, true, status
		case pid == r.hook:
			r.hook, hookDone, hookWS = 0, true, status
		default:
			r.m.OtherExited(reaper.ExitCode(status)) // --wait-for=tree's exit code
			if r.WarnOnReap {
				r.Log.Warn("reaped a process that is not the child", "reaped_pid", pid, "status", describe(status))
			}
		}
	}
	if cap(r.exits) > keptExits {
		r.exits = nil // a storm's batch is not kept for the idle run that follows
	}
	now := time.Now()
	r.pace.Scanned(start, now)
	r.nreaped += n
	if n > 0 {
		r.m.Reaped(now)
		if r.Recorder != nil {
			r.Recorder.Reaped(n)
		}
	}
	// The hard deadline's kill stops the tree before it kills it: that
	// stop is lfinit's own, not the user's.
	if childStopped && !childDone && !r.tree.killing() {
		r.suspend()
	}
	var acts []core.Action
	if hookDone {
		acts = r.hookExited(now, hookWS)
	}
	if childDone {
		acts = append(acts, r.drainNotify()...)
		if r.handOver(ws) {
			return acts
		}
		r.reclaimTerminal()
		r.ended(ws)
		code := reaper.ExitCode(ws)
		if r.logsAt(slog.LevelDebug) {
			r.Log.Debug("child exited", "child_pid", r.child, "status", describe(ws), "exit_code", code)
		}
		return append(acts, r.m.ChildExited(now, code, empty)...)
	}
	if empty {
		return append(acts, r.m.TreeEmpty(now)...)
	}
	return acts
}

// ended records why the main process ended with ws, and what it cost.
func (r *runner) ended(ws unix.WaitStatus) {
	r.end.usage = reaper.UsageOf(&r.end.ru)
	lfinitKilled := r.tree.killing() || r.sentKill
	r.end.cause = CauseOf(ws, lfinitKilled, func() (bool, bool) { return r.end.memory.oomKilled(r.Log) })
}

// apply carries out actions in order; true once the machine said exit
// (r.code is then lfinit's exit code).
func (r *runner) apply(acts []core.Action) bool {
	for _, a := range acts {
		switch a.Kind {
		case core.ActPhase:
			r.phase(a.Phase)
		case core.ActForward:
			r.forward(a)
		case core.ActTermTree:
			r.news(r.tree.terminate(a.Signal))
		case core.ActKillTree:
			r.kill(a.Signal)
			r.m.KillDone(time.Now())
		case core.ActReadPidfile:
			if r.apply(r.readPidfile()) {
				return true
			}
		case core.ActPidfileFailed:
			r.pidfileFailed(a.Why)
		case core.ActStartHook:
			if r.apply(r.startHook()) {
				return true
			}
		case core.ActKillHook:
			r.killHook(a.Why)
		case core.ActExit:
			r.code = a.Code
			return true
		}
	}
	r.status.flush(r.snapshot)
	return false
}

// news marks a status due when changed says the last action changed it.
func (r *runner) news(changed bool) {
	r.status.unpublished = r.status.unpublished || changed
}

// phase records and logs the start of phase p.
func (r *runner) phase(p core.Phase) {
	now := time.Now()
	r.status.enter(p, now)
	if !r.logsAt(slog.LevelDebug) {
		return
	}
	attrs := []any{"phase", string(p)}
	if hard, ok := r.m.HardDeadline(); ok {
		attrs = append(attrs, "remaining_seconds", seconds(budget.Left(hard, now)))
	}
	r.Log.Debug("phase", attrs...)
}

// logsAt reports whether a line at level would be written: the fields of a
// line nobody reads are not built (right after a forward, that work would
// compete with the child for the CPU).
func (r *runner) logsAt(level slog.Level) bool {
	return r.Log.Enabled(context.Background(), level)
}

// spinWindow is how early the timer is armed before a deadline. Go's timers
// can wake a millisecond late (the netpoller sleeps in whole milliseconds);
// the last stretch is waited out on the CPU, so a kill lands within
// microseconds of its deadline. It costs at most this much CPU per deadline.
const spinWindow = 2 * time.Millisecond

// untilDue waits out what is left before the machine's next deadline, if
// it is within the spin window, and returns the instant it is due.
func untilDue(m *core.Machine) time.Time {
	now := time.Now()
	next, ok := m.Next()
	if !ok || !now.Before(next) || next.Sub(now) > spinWindow {
		return now
	}
	for now.Before(next) {
		now = time.Now()
	}
	return now
}

// seconds is d as lfinit logs it (logline.Seconds).
func seconds(d time.Duration) float64 { return logline.Seconds(d) }

// logLine writes one log line at level without looking up its caller (logline.Write).
func (r *runner) logLine(level slog.Level, msg string, attrs ...any) {
	logline.Write(r.Log, level, msg, attrs...)
}

func describe(ws unix.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + forward.Name(ws.Signal())
	}
	return "exited"
}

// Package supervisor is the loop that drives lfinit's decision core
// (core.Machine): it turns real signals, wait4's exits and timers into the
// machine's events, each with its instant, and carries out the actions that
// come back (forward, terminate or kill the tree, publish a phase, exit)
// with kill, the reaper and the status publishers.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/budget"
	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/exitcode"
	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/internal/logline"
	"github.com/light-fabric/lfinit/internal/startpages"
	"github.com/light-fabric/lfinit/readiness"
	"github.com/light-fabric/lfinit/reaper"
	"github.com/light-fabric/lfinit/spawn"
	"github.com/light-fabric/lfinit/statusfile"
)

// Config is what Run needs: the machine's options (core.Options) plus the wiring.
type Config struct {
	core.Options
	Argv   []string       // the command and its arguments
	Env    []string       // the child's environment
	Target forward.Target // who gets forwarded signals
	PID1   bool           // lfinit is its PID namespace's init
	Log    *slog.Logger
	// PreserveFDs is how many inherited descriptors from 3 up the child gets.
	PreserveFDs int
	// Recorder, when set, is told of every event; Publishers get a
	// snapshot at every transition.
	Recorder   Recorder
	Publishers []Publish
	// Readiness, when set, gates the ready phase on the child answering.
	Readiness *readiness.Check
	// Signals are lfinit's caught signals (CaughtSignals), caught before
	// the child starts; Run refuses to start one without them.
	Signals *Signals
	// WarnOnReap logs at WARN every reaped process other than the child (tini -w).
	WarnOnReap bool
	// Credential, when set, is the child's uid, gid and groups (--user).
	Credential *syscall.Credential
	// Hook is the shutdown hook's command (--on-shutdown), nil for none;
	// Options.Budget.Hook is its timeout.
	Hook []string
}

// Signals are lfinit's caught signals, queued until the loop reads them.
type Signals struct {
	relayed chan os.Signal // every other caught signal (forward.Caught)
	chld    chan os.Signal // SIGCHLD: its own one-slot channel, so a storm of
	// other signals can never crowd out a reap
}

// CaughtSignals wraps channels that already receive forward.Caught: SIGCHLD
// on sigchld, the rest on relayed; caught before Run was called.
func CaughtSignals(relayed, sigchld chan os.Signal) *Signals {
	return &Signals{relayed: relayed, chld: sigchld}
}

// Recorder is told of each event as it happens, from the loop's
// goroutine (the metrics). Its methods must not block: they sit between a
// signal and its forward, a deadline and its kill.
type Recorder interface {
	SetReady(ready bool) // first, before anything else on a shutdown signal
	SignalReceived(name string)
	SignalForwarded(name string)
	Reaped(n int)
}

// Publish takes a status snapshot at every transition but the last (the
// status file, the metrics' phase): the final one is Result's, which the
// caller writes. It must not block either.
type Publish func(statusfile.Status)

// runner is the thin syscall side of one run: it feeds events to the
// machine and carries out its actions.
type runner struct {
	Config
	m          *core.Machine
	self       int // lfinit's pid, read once: no syscall on the way out
	child      int
	reaped     bool // the child is reaped: its pid may be recycled, never signal it
	start      time.Time
	readyAt    time.Time
	phaseSince time.Time
	code       int // lfinit's exit code, once the machine said exit
	// sendTree signals the tree (reaper.SignalTree) and killTree kills it
	// (reaper.KillTree); tests put a fake tree in their place.
	sendTree    func(pid1 bool, sig syscall.Signal, group int) reaper.Signalled
	killTree    func(pid1 bool, group int, hold bool) reaper.Signalled
	killStart   time.Time     // the first round of the hard deadline's kill
	killed      []reaper.Proc // every process SIGKILLed, once each
	killedSet   map[reaper.Proc]bool
	leftovers   int             // processes the child left behind that got SIGTERM
	unsignaled  map[int]bool    // processes a signal could not reach, reported once each
	treeMethod  string          // how the tree is found (statusfile.Status.TreeMethod)
	tty         *spawn.Terminal // lfinit's controlling terminal, nil without one
	interactive bool            // the child was given the terminal's foreground
	jobControl  bool            // not PID 1 and on a terminal: stop when the child stops
	nreaped     int
	unpublished bool          // publish a status after this batch of actions
	pidfile     pidfileState  // --pidfile's reads (daemon.go)
	pace        reapPace      // spaces out full reaps in a storm of orphans
	reapLater   bool          // a SIGCHLD waits for pace's next full reap
	exits       []reaper.Exit // the last reap's exits; its memory is reused (up to keptExits)
	probe       probeState    // the readiness check's reports (probe.go)
	hook        int           // the shutdown hook's pid until it is reaped (hook.go)
	end         ending        // how the main process ended (cause.go)
	sentKill    bool          // lfinit itself sent the main process SIGKILL
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
	now := time.Now()
	r := &runner{Config: c, m: core.NewMachine(c.Options), start: now, phaseSince: now, self: os.Getpid(),
		sendTree: reaper.SignalTree, killTree: reaper.KillTree}
	if r.startOrFail() {
		return r.result()
	}
	var ready <-chan struct{}
	stopProbe := func() {}
	if c.Readiness != nil {
		ready, r.probe.reports, stopProbe = c.Readiness.Watch()
	}
	defer stopProbe()
	// Zombies inherited from before lfinit started send no new SIGCHLD.
	if r.apply(r.m.Started(time.Now(), c.Readiness == nil)) || r.apply(r.reap()) {
		return r.result()
	}
	startpages.Drop()
	r.warmStopPath()
	r.end.memory.start()
	r.loop(ready, stopProbe)
	return r.result()
}

// startOrFail starts the child; true when it could not be started (the run is over).
func (r *runner) startOrFail() bool {
	err := r.startChild()
	if err == nil {
		return false
	}
	var se *spawn.Error
	code := exitcode.NotExec
	if errors.As(err, &se) {
		code = se.Code
	}
	r.Log.Error(err.Error(), "exit_code", code)
	return r.apply(r.m.FailedToStart(code))
}

// loop feeds the machine its events (signals, exits, deadlines, the
// readiness check) until it says exit.
func (r *runner) loop(ready <-chan struct{}, stopProbe func()) {
	sigs, chld := r.Signals.relayed, r.Signals.chld
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	later := time.NewTimer(time.Hour) // the full reap a SIGCHLD put off
	later.Stop()
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
		case <-ready:
			ready = nil
			acts = r.m.MarkReady(time.Now())
			if len(acts) > 0 {
				r.Log.Debug("child is ready", "check", r.Readiness.String(), "after_seconds", seconds(time.Since(r.start)))
			}
		}
		if ready != nil && r.m.Phase() != statusfile.Starting {
			stopProbe() // nothing left to gate
			ready = nil
		}
		if r.apply(acts) {
			return
		}
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

func (r *runner) signal(sig syscall.Signal) []core.Action {
	if !forward.IsRelayed(sig) {
		return nil // SIGPIPE: lfinit's own stderr broke; the child's output is its own
	}
	what := "relay"
	switch {
	case r.m.Drops(sig):
		what = "dropped: --rewrite"
	case r.m.IsShutdownSignal(sig) && !r.m.ShuttingDown():
		// Readiness drops before anything else, even the log line.
		r.setReady(false)
		what = "shutdown"
	case r.m.IsShutdownSignal(sig):
		what = "hurry"
	case r.reaped && !r.m.FollowsTree():
		what = "dropped: the child has exited"
	}
	if sig == syscall.SIGCONT {
		r.resumeTerminal() // before the relay: the child must find the terminal its own
	}
	now := time.Now()
	// Forward before the bookkeeping: formatting the log line and waking
	// the log writer take tens of microseconds a forward must not wait for.
	acts, sent := r.forwardNow(r.m.Signal(now, sig))
	name := forward.Name(sig)
	if r.Recorder != nil {
		r.Recorder.SignalReceived(name)
	}
	if r.logsAt(slog.LevelDebug) {
		r.logReceived(name, what, now)
	}
	// What was sent is told after what caused it.
	for _, d := range sent {
		r.report(d.a, d.err)
	}
	return acts
}

// logReceived is the debug line of a received signal.
func (r *runner) logReceived(name, what string, now time.Time) {
	attrs := []any{"signal", name, "action", what}
	if hard, ok := r.m.HardDeadline(); ok && r.m.ShuttingDown() {
		attrs = append(attrs, "reason", forward.Reason(r.m.Trigger()), "hard_deadline", hard.UTC().Format(time.RFC3339Nano), "remaining_seconds", seconds(budget.Left(hard, now)))
	}
	r.Log.Debug("signal received", attrs...)
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
	if childStopped && !childDone && r.killedSet == nil {
		r.suspend()
	}
	var acts []core.Action
	if hookDone {
		acts = r.hookExited(now, hookWS)
	}
	if childDone {
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
	lfinitKilled := r.killedSet != nil || r.sentKill
	r.end.cause = CauseOf(ws, lfinitKilled, func() (bool, bool) { return r.end.memory.oomKilled(r.Log) })
}

// startChild prepares lfinit's side (subreaper, descriptors) and starts
// the child; once it runs, lfinit leaves the start directory and its
// inherited descriptors, and ignores the signals Go cannot catch.
func (r *runner) startChild() error {
	if !r.PID1 {
		if err := reaper.SetSubreaper(); err != nil {
			r.Log.Warn("cannot become a child subreaper; orphans of the child will not be reaped by lfinit", "err", err)
		}
	}
	inherited := spawn.InheritedFDs()
	opts := r.spawnOptions()
	if err := spawn.CloseInheritedFDs(opts.PreserveFDs); err != nil {
		r.Log.Warn("cannot close inherited descriptors; the child may inherit them", "err", err)
	}
	pid, err := spawn.Start(r.Argv, opts)
	// lfinit has no use for any of them: the child has its copies.
	spawn.CloseFDs(inherited)
	if err != nil {
		return err
	}
	r.child, r.interactive = pid, opts.Foreground
	r.treeMethod = "kill-1"
	if !r.PID1 {
		r.treeMethod = reaper.Method()
	}
	r.leaveStartDir()
	if err := forward.IgnoreUnrelayable(); err != nil {
		r.Log.Warn("cannot ignore SIGRTMIN and signal 32; they would kill lfinit when it is not PID 1", "err", err)
	}
	r.Log.Debug("started", "pid", os.Getpid(), "child_pid", pid, "cmd", r.Argv[0], "pid1", r.PID1, "terminal", r.tty != nil,
		"grace_seconds", seconds(r.Budget.Grace), "floor_seconds", seconds(r.Budget.Floor),
		"drain_delay_seconds", seconds(r.Budget.DrainDelay), "forward_to", r.Target.String(), "tree_method", r.treeMethod)
	return nil
}

// spawnOptions is how the child is started: with --preserve-fds'
// descriptors and, when socket activation names lfinit (LISTEN_PID is
// its pid), the LISTEN_FDS sockets too, and LISTEN_PID made the child's.
func (r *runner) spawnOptions() spawn.Options {
	o := spawn.Options{Env: r.Env, PreserveFDs: r.PreserveFDs, Foreground: r.openTerminal(), Credential: r.Credential}
	n, ok := spawn.ListenFDs(r.Env, r.self)
	if !ok {
		return o
	}
	o.PreserveFDs = max(o.PreserveFDs, n)
	o.ListenPID = spawn.CanSetListenPID()
	if !o.ListenPID {
		r.Log.Warn("socket activation: the sockets are passed, but without /proc lfinit cannot make LISTEN_PID the child's pid", "listen_fds", n)
	}
	r.Log.Debug("socket activation: passing the sockets and LISTEN_PID on", "listen_fds", n)
	return o
}

// leaveStartDir moves lfinit to /, so that it pins no mount; the child
// keeps the start directory, and lfinit's own paths were made absolute
// before it started.
func (r *runner) leaveStartDir() {
	if err := os.Chdir("/"); err != nil {
		r.Log.Debug("cannot move to /", "err", err)
	}
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
			res := r.sendTree(r.PID1, a.Signal, 0)
			r.leftovers += len(res.Hit)
			r.warnUnsignalled(res.Failed, a.Signal)
			r.Log.Debug("terminating leftovers of the child", "signal", "SIGTERM", "leftovers", len(res.Hit))
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
	if r.unpublished {
		r.unpublished = false
		r.publish()
	}
	return false
}

func (r *runner) phase(p core.Phase) {
	now := time.Now()
	r.phaseSince, r.unpublished = now, true
	if p == statusfile.Ready {
		r.readyAt = now
	}
	r.setReady(p == statusfile.Ready)
	if !r.logsAt(slog.LevelDebug) {
		return
	}
	attrs := []any{"phase", string(p)}
	if hard, ok := r.m.HardDeadline(); ok {
		attrs = append(attrs, "remaining_seconds", seconds(budget.Left(hard, now)))
	}
	r.Log.Debug("phase", attrs...)
}

// errChildGone is deliver's answer once the child is reaped: its pid may
// have been recycled, so nothing is sent and nothing is reported.
var errChildGone = errors.New("the child is reaped")

// delivery is a forward carried out, to be reported.
type delivery struct {
	a   core.Action
	err error
}

// forwardNow carries out the forwards among acts at once, in order, and
// returns the other actions for apply and the forwards to report.
func (r *runner) forwardNow(acts []core.Action) ([]core.Action, []delivery) {
	rest := acts[:0]
	var sent []delivery
	for _, a := range acts {
		if a.Kind == core.ActForward {
			sent = append(sent, delivery{a, r.deliver(a)})
			continue
		}
		rest = append(rest, a)
	}
	return rest, sent
}

// forward sends a forwarded signal and reports it.
func (r *runner) forward(a core.Action) { r.report(a, r.deliver(a)) }

// report tells of a forward where it was sent: each error decided there,
// as tini's wait_and_forward_signal does.
func (r *runner) report(a core.Action, err error) {
	if err == errChildGone { // deliver's own sentinel, never wrapped
		return
	}
	name := forward.Name(a.Signal)
	if err != nil {
		r.Log.Warn("cannot forward signal", "signal", name, "target_pid", r.child, "err", err)
		return
	}
	if r.Recorder != nil {
		r.Recorder.SignalForwarded(name)
	}
	// The deadline signal means the child outlived its grace.
	level := slog.LevelDebug
	if a.Why == "deadline" {
		level = slog.LevelWarn
	}
	if a.Why == "relay" || !r.logsAt(level) {
		return
	}
	attrs := []any{"signal", name, "to", r.Target.String(), "target_pid", r.child}
	if a.Tree {
		attrs = []any{"signal", name, "to", "tree"}
	}
	if hard, ok := r.m.HardDeadline(); ok {
		attrs = append(attrs, "remaining_seconds", seconds(budget.Left(hard, time.Now())))
	}
	r.logLine(level, a.Why+" signal sent", attrs...)
}

// deliver sends a forwarded signal to the child, its group, or the tree.
func (r *runner) deliver(a core.Action) error {
	if a.Tree {
		r.sentKill = r.sentKill || a.Signal == syscall.SIGKILL
		return r.signalTree(a.Signal)
	}
	if r.reaped {
		return errChildGone
	}
	r.sentKill = r.sentKill || a.Signal == syscall.SIGKILL
	return forward.Deliver(r.child, r.Target, a.Signal)
}

// kill sends sig (SIGKILL) to the whole tree, stopped first so that the
// count is exact (reaper.KillTree), the child's group first while the
// child is not reaped (the cheapest, surest reach). The machine repeats it
// until the tree is empty; the first round is logged at WARN, later ones
// only at debug, and killed counts each process once.
func (r *runner) kill(sig syscall.Signal) {
	group := 0
	if !r.reaped {
		group = r.child
	}
	first := r.killedSet == nil
	if first {
		r.killedSet = map[reaper.Proc]bool{} // from now on a stopped child is lfinit's doing
		r.killStart = time.Now()
	}
	// Children of a process that has not stopped yet are held back (it
	// could reap them before it dies) for half the time lfinit waits for
	// the tree; then they are killed whatever their parent does.
	hold := time.Since(r.killStart) < r.m.KillGiveUp()/2
	res := r.killTree(r.PID1, group, hold)
	if res.Unsettled > 0 && r.logsAt(slog.LevelDebug) {
		r.logLine(slog.LevelDebug, "hard deadline: part of the tree had not stopped yet; its children wait for the next round",
			"running", res.Unsettled, "held", res.Held, "waited_seconds", seconds(reaper.FreezeWait))
	}
	fresh := r.addKilled(res.Hit)
	r.warnUnsignalled(res.Failed, sig)
	if first && len(fresh) == 0 {
		r.unpublished = true
		if r.logsAt(slog.LevelDebug) {
			r.logLine(slog.LevelDebug, "hard deadline: nothing of the tree was left to kill", "child_alive", !r.reaped)
		}
		return
	}
	if first {
		r.unpublished = true
		r.logLine(slog.LevelWarn, "hard deadline: killed the process tree", "signal", forward.Name(sig), "killed", len(fresh),
			"child_alive", !r.reaped, "still_running", names(fresh, 10))
		return
	}
	if len(fresh) > 0 {
		r.unpublished = true
		if r.logsAt(slog.LevelDebug) {
			r.logLine(slog.LevelDebug, "hard deadline: killed more of the tree", "killed", len(fresh), "still_running", names(fresh, 10))
		}
	}
}

// addKilled records the processes of hit not already killed, and returns them.
func (r *runner) addKilled(hit []reaper.Proc) []reaper.Proc {
	if r.killedSet == nil {
		r.killedSet = make(map[reaper.Proc]bool, len(hit))
	}
	var fresh []reaper.Proc
	for _, p := range hit {
		id := reaper.Proc{Pid: p.Pid, Start: p.Start} // state and name may change between rounds
		if !r.killedSet[id] {
			r.killedSet[id] = true
			fresh = append(fresh, p)
		}
	}
	r.killed = append(r.killed, fresh...)
	return fresh
}

// warnUnsignalled warns, once per process, of those a signal could not reach: the
// tree is then not what lfinit promises, and the final records say so.
func (r *runner) warnUnsignalled(failed []reaper.Failure, sig syscall.Signal) {
	for _, f := range failed {
		if r.unsignaled[f.Pid] {
			continue
		}
		if r.unsignaled == nil {
			r.unsignaled = map[int]bool{}
		}
		r.unsignaled[f.Pid], r.unpublished = true, true
		r.logLine(slog.LevelWarn, "cannot signal a process of lfinit's tree; it may outlive lfinit", "signal", forward.Name(sig),
			"target_pid", f.Pid, "cmd", f.Comm, "err", f.Err)
	}
}

// logsAt reports whether a line at level would be written: the fields of a
// line nobody reads are not built (right after a forward, that work would
// compete with the child for the CPU).
func (r *runner) logsAt(level slog.Level) bool {
	return r.Log.Enabled(context.Background(), level)
}

func (r *runner) setReady(ready bool) {
	if r.Recorder != nil {
		r.Recorder.SetReady(ready)
	}
}

func (r *runner) publish() {
	if len(r.Publishers) == 0 {
		return
	}
	s := r.snapshot()
	for _, publish := range r.Publishers {
		publish(s)
	}
}

// snapshot is the state to publish now.
func (r *runner) snapshot() statusfile.Status {
	now := time.Now().UTC()
	s := statusfile.Status{
		Version:    statusfile.Version,
		Phase:      r.m.Phase(),
		Ready:      r.m.Phase() == statusfile.Ready,
		Pid:        r.self,
		StartedAt:  utc(r.start),
		ReadyAt:    utc(r.readyAt),
		PhaseSince: r.phaseSince.UTC(),
		UpdatedAt:  now,
		Killed:     len(r.killed),
		Reaped:     r.nreaped,
		// Not signalled: counted once each, whichever signal missed.
		NotSignalled: len(r.unsignaled),
		TreeMethod:   r.treeMethod,
		ReadyError:   r.probe.lastError(),
	}
	r.hookStatus(&s)
	r.end.publish(&s)
	if r.child > 0 {
		s.ChildPid = &r.child
	}
	if o := r.m.Outcome(); o != statusfile.Running {
		code := r.m.Code()
		s.Outcome, s.ExitCode = &o, &code
		if !r.m.ShuttingDown() && o != statusfile.Failed {
			reason := "child-exit"
			s.Reason = &reason
		}
	}
	if r.m.ShuttingDown() {
		tl := r.m.Timeline()
		reason, sig := forward.Reason(r.m.Trigger()), forward.Name(r.m.Trigger())
		s.Reason, s.Signal = &reason, &sig
		s.SignalAt, s.GraceDeadline = utc(tl.SignalAt), utc(tl.GraceDeadline)
	}
	if hard, ok := r.m.HardDeadline(); ok {
		s.HardDeadline = utc(hard)
		left := budget.Left(hard, now).Seconds()
		s.RemainingSeconds = &left
	}
	if len(r.killed) > 0 {
		s.StillRunning = names(r.killed, 50)
	}
	return s
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

func utc(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// names lists processes as name[pid], at most limit of them.
func names(procs []reaper.Proc, limit int) []string {
	var out []string
	for i, p := range procs {
		if i == limit {
			out = append(out, fmt.Sprintf("and %d more", len(procs)-limit))
			break
		}
		out = append(out, fmt.Sprintf("%s[%d]", p.Comm, p.Pid))
	}
	return out
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

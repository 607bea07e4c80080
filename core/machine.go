// Package core is lfinit's pure decision core: the state machine (events
// in with the instant they happened, actions out) and its vocabulary
// (phases, outcomes, causes, hook outcomes).
//
// Machine reads no clock and makes no syscalls: a signal, the child's exit,
// the tree becoming empty or a timer goes in with its instant, and actions
// come out (forward a signal, terminate or kill the tree, announce a phase,
// exit), so every rule is unit-tested with made-up instants. The loop that
// drives it with real signals, wait4 and kill is supervisor's. The package
// imports nothing impure, and imports_test.go holds that rule.
package core

import (
	"syscall"
	"time"

	"github.com/light-fabric/lfinit/budget"
	"github.com/light-fabric/lfinit/exitcode"
	"github.com/light-fabric/lfinit/forward"
)

// ExitForced is the exit of a forced stop (exitcode.Forced).
const ExitForced = exitcode.Forced

// The defaults of the kill path: how often SIGKILL is sent again while
// the tree lives, and when lfinit stops waiting for processes that do not
// die (stuck in the kernel).
const (
	KillRetryEvery = 50 * time.Millisecond
	KillGiveUp     = time.Second
)

// Options are the decisions an operator makes about a run.
type Options struct {
	Budget          budget.Config
	ShutdownSignals []syscall.Signal // default TERM, INT
	StopSignal      syscall.Signal   // 0: forward the shutdown signal received
	DeadlineSignal  syscall.Signal   // 0: the stop signal again
	NoDeadline      bool             // --deadline-signal=none
	ExitMap         map[int]int      // child code → lfinit code
	KillRetry       time.Duration    // resend SIGKILL while the tree lives (default KillRetryEvery)
	KillGiveUp      time.Duration    // stop waiting for unkillable processes (default KillGiveUp)
	// Rewrite maps a received signal to the one the child gets (0: drop
	// it entirely). A rewritten shutdown signal still starts the shutdown;
	// its TO is the stop signal unless StopSignal is set.
	Rewrite map[syscall.Signal]syscall.Signal
	// Daemon says what is followed once the start command exits 0
	// (--pidfile, --wait-for=tree); PidfileTimeout bounds the wait for
	// the pidfile, read every PidfilePoll (default PidfilePollEvery).
	Daemon         Daemon
	Pidfile        string // the path, for the loop (DaemonPidfile)
	PidfileTimeout time.Duration
	PidfilePoll    time.Duration
}

// Kind says what an Action asks for.
type Kind int

// The kinds of Action.
const (
	ActPhase    Kind = iota // announce a new phase (Phase)
	ActForward              // send Signal to the child, or its group (Why says which rule)
	ActTermTree             // SIGTERM what the exited child left behind
	ActKillTree             // SIGKILL the whole tree
	ActExit                 // lfinit exits with Code
	// ActReadPidfile asks the loop to read the pidfile and answer with
	// Adopt or PidfileChecked.
	ActReadPidfile
	ActPidfileFailed // no process to follow: log Why (the last problem) as an error
	// ActStartHook starts the shutdown hook; the loop answers with
	// HookExited once it is reaped, or at once when it cannot start.
	ActStartHook
	ActKillHook // SIGKILL the hook's process group (Why: timeout, hurry)
)

// Action is one thing the machine asks the loop to do, in order.
type Action struct {
	Kind   Kind
	Signal syscall.Signal
	Why    string // for ActForward: relay, stop, deadline
	Tree   bool   // for ActForward: to every process of the tree, not the main process
	Phase  Phase
	Code   int
}

// Machine is the pure decision core of one run.
type Machine struct {
	opt         Options
	phase       Phase
	outcome     Outcome
	code        int
	alive       bool // the main child is not reaped yet
	shutdown    bool
	timeline    budget.Timeline
	stopSig     syscall.Signal
	deadlineSig syscall.Signal // 0: none
	trigger     syscall.Signal // the first shutdown signal
	reason      string         // why lfinit stopped by itself (StopFor), "" after a signal

	stopSent   bool
	gracePast  bool // the grace deadline passed with the child alive
	cleanupAt  time.Time
	killedAt   time.Time
	lastKillAt time.Time
	waitFrom   time.Time // the give-up counts from here: the first kill round done, or the last reap
	startedAt  time.Time
	exitedAt   time.Time
	done       bool
	daemon     daemonState
	hook       hookState
}

// NewMachine returns a machine for a child about to be started.
func NewMachine(opt Options) *Machine {
	if len(opt.ShutdownSignals) == 0 {
		opt.ShutdownSignals = forward.DefaultShutdown
	}
	if opt.KillRetry <= 0 {
		opt.KillRetry = KillRetryEvery
	}
	if opt.KillGiveUp <= 0 {
		opt.KillGiveUp = KillGiveUp
	}
	if opt.PidfilePoll <= 0 {
		opt.PidfilePoll = PidfilePollEvery
	}
	return &Machine{opt: opt}
}

// Phase is the current phase.
func (m *Machine) Phase() Phase {
	if m.phase == "" {
		return Starting
	}
	return m.phase
}

// Outcome is the outcome so far (Running until it is known).
func (m *Machine) Outcome() Outcome { return m.outcome }

// Timeline is the shutdown schedule, valid once ShuttingDown is true.
func (m *Machine) Timeline() budget.Timeline { return m.timeline }

// ShuttingDown reports whether a shutdown signal has been accepted.
func (m *Machine) ShuttingDown() bool { return m.shutdown }

// Trigger is the first shutdown signal, 0 before any.
func (m *Machine) Trigger() syscall.Signal { return m.trigger }

// Reason is why the shutdown began: the trigger's word (terminate,
// interrupt, …), or the reason lfinit stopped for by itself (StopFor).
func (m *Machine) Reason() string {
	if m.reason != "" {
		return m.reason
	}
	return forward.Reason(m.trigger)
}

// OwnStop reports whether lfinit began the shutdown by itself (StopFor),
// not on a signal.
func (m *Machine) OwnStop() bool { return m.reason != "" }

// StopFor begins, at now, the same bounded shutdown a SIGTERM would, for
// a reason of lfinit's own (the service's watchdog); the child gets the
// stop signal (--stop-signal, else SIGTERM). Nothing when a shutdown
// already began or the run is over.
func (m *Machine) StopFor(now time.Time, reason string) []Action {
	if m.done || m.shutdown {
		return nil
	}
	m.reason = reason
	return m.startShutdown(now, syscall.SIGTERM, syscall.SIGTERM)
}

// HardDeadline is when the tree is killed, and whether one is set at all.
func (m *Machine) HardDeadline() (time.Time, bool) {
	switch {
	case m.shutdown:
		return m.timeline.HardDeadline, true
	case !m.cleanupAt.IsZero():
		return m.cleanupAt, true
	}
	return time.Time{}, false
}

// IsShutdownSignal reports whether sig starts (or hurries) a shutdown.
func (m *Machine) IsShutdownSignal(sig syscall.Signal) bool {
	if m.Drops(sig) {
		return false
	}
	for _, s := range m.opt.ShutdownSignals {
		if s == sig {
			return true
		}
	}
	return false
}

// ShutdownSignals are the signals that start (or hurry) a shutdown, the
// default (forward.DefaultShutdown) when Options named none.
func (m *Machine) ShutdownSignals() []syscall.Signal { return m.opt.ShutdownSignals }

// Drops reports whether sig is rewritten to 0: it changes nothing at all.
func (m *Machine) Drops(sig syscall.Signal) bool {
	to, ok := m.opt.Rewrite[sig]
	return ok && to == 0
}

// Started records that the child was started at now. Without readiness
// gating the child is ready as soon as exec succeeded; with --pidfile, once
// the daemon is adopted.
func (m *Machine) Started(now time.Time, ready bool) []Action {
	m.alive, m.startedAt = true, now
	m.daemon.gated = !ready
	if ready && m.opt.Daemon != DaemonPidfile {
		return m.setPhase(nil, Ready)
	}
	return m.setPhase(nil, Starting)
}

// MarkReady records that the child answered its readiness check.
func (m *Machine) MarkReady(now time.Time) []Action {
	if m.phase != Starting || m.shutdown || m.done {
		return nil
	}
	if m.opt.Daemon == DaemonPidfile && !m.daemon.adopted {
		m.daemon.readySeen = true // ready once the daemon is adopted too
		return nil
	}
	return m.setPhase(nil, Ready)
}

// FailedToStart records that the child could not be started.
func (m *Machine) FailedToStart(code int) []Action {
	m.outcome, m.code, m.done = Failed, code, true
	acts := m.setPhase(nil, Stopped)
	return append(acts, Action{Kind: ActExit, Code: code})
}

// Signal handles a signal lfinit received at now.
func (m *Machine) Signal(now time.Time, sig syscall.Signal) []Action {
	if m.done {
		return nil
	}
	if m.Drops(sig) {
		return nil // neither a shutdown nor a relay
	}
	to, rewritten := m.opt.Rewrite[sig]
	if !rewritten {
		to = sig
	}
	if !m.IsShutdownSignal(sig) {
		if m.alive {
			return []Action{m.forwardAction(to, "relay")}
		}
		return nil
	}
	if !m.shutdown {
		return m.startShutdown(now, sig, to)
	}
	var acts []Action
	next, what := m.timeline.Again(m.opt.Budget, now)
	m.timeline = next
	// The second signal ends the hook at once; the stop it held follows.
	acts = m.killHook(now, "hurry", acts)
	if what == budget.SendDeadline && m.alive && m.deadlineSig != 0 {
		acts = append(acts, m.forwardAction(m.deadlineSig, "deadline"))
	}
	return m.advance(now, acts)
}

// startShutdown starts the shutdown on sig, which the child would get as to.
func (m *Machine) startShutdown(now time.Time, sig, to syscall.Signal) []Action {
	m.shutdown, m.trigger = true, sig
	m.stopSig = m.opt.StopSignal
	if m.stopSig == 0 {
		m.stopSig = to
	}
	m.deadlineSig = m.opt.DeadlineSignal
	if m.deadlineSig == 0 {
		m.deadlineSig = m.stopSig
	}
	if m.opt.NoDeadline {
		m.deadlineSig = 0
	}
	m.daemon.awaiting = false // a shutdown while waiting for the pidfile aborts the start
	if !m.alive {
		// The child already exited on its own: the shutdown only caps
		// the cleanup of its leftovers.
		m.timeline = budget.Timeline{SignalAt: now, StopAt: now, GraceDeadline: now, HardDeadline: m.cleanupAt, Signals: 1}
		return m.advance(now, nil)
	}
	ready := m.phase == Ready
	m.timeline = budget.Start(m.opt.Budget, now, ready)
	switch {
	case !ready:
		return m.advance(now, m.setPhase(nil, AbortingStartup))
	case m.timeline.StopAt.After(now):
		// The hook is part of the quiesce: the stop signal waits for it.
		return m.advance(now, m.startHook(now, m.setPhase(nil, Quiescing)))
	}
	// No drain delay: the quiesce is empty, so it is not announced.
	return m.advance(now, nil)
}

// ChildExited records the main child's exit code at now (its status, or
// 128+N for a death by signal N); treeEmpty says
// whether wait4 found no other process left. In the daemon modes a start
// command that exits 0 hands over to the pidfile's process or to the tree.
func (m *Machine) ChildExited(now time.Time, code int, treeEmpty bool) []Action {
	if !m.alive || m.done || m.daemon.tree {
		return nil
	}
	if acts, ok := m.startCommandExited(now, code, treeEmpty); ok {
		return acts
	}
	return m.mainExited(now, code, treeEmpty)
}

// mainExited records the main process's exit with code at now.
func (m *Machine) mainExited(now time.Time, code int, treeEmpty bool) []Action {
	m.alive, m.exitedAt = false, now
	if mapped, ok := m.opt.ExitMap[code]; ok {
		code = mapped
	}
	switch {
	case !m.shutdown:
		m.outcome, m.code = ChildExited, code
		m.cleanupAt = m.opt.Budget.CleanupDeadline(now)
	case m.gracePast || !m.killedAt.IsZero() || !now.Before(m.timeline.GraceDeadline):
		m.outcome, m.code = DeadlineExceeded, ExitForced
	default:
		m.outcome, m.code = Graceful, code
	}
	if treeEmpty {
		return m.enterStopped()
	}
	acts := m.setPhase(nil, CleaningUp)
	if m.killedAt.IsZero() {
		acts = append(acts, Action{Kind: ActTermTree, Signal: syscall.SIGTERM})
	}
	return m.advance(now, acts)
}

// TreeEmpty records that lfinit has no process left to reap.
func (m *Machine) TreeEmpty(now time.Time) []Action {
	switch {
	case m.done:
		return nil
	case m.alive && m.daemon.awaiting:
		return m.pidfileFailed(now, m.daemon.problem+"; no process is left in lfinit's tree", true)
	case m.alive && m.daemon.tree:
		return m.mainExited(now, m.daemon.lastCode, true)
	case m.alive:
		return nil
	}
	return m.enterStopped()
}

// Tick fires whatever is due at now.
func (m *Machine) Tick(now time.Time) []Action {
	if m.done {
		return nil
	}
	return m.advance(now, nil)
}

// Next is the next instant at which Tick has something to do.
func (m *Machine) Next() (time.Time, bool) {
	var next time.Time
	consider := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	switch {
	case m.done:
		return time.Time{}, false
	case m.daemon.awaiting:
		consider(m.daemon.nextRead)
	case !m.killedAt.IsZero():
		consider(m.lastKillAt.Add(m.opt.KillRetry))
		consider(m.giveUpAt())
	case m.shutdown && m.alive:
		if !m.stopSent {
			consider(m.timeline.StopAt)
		}
		if !m.gracePast {
			consider(m.timeline.GraceDeadline)
		}
		consider(m.timeline.HardDeadline)
	case !m.alive:
		if hard, ok := m.HardDeadline(); ok {
			consider(hard)
		}
	}
	if m.hookHolds() {
		consider(m.timeline.HookDeadline)
	}
	return next, !next.IsZero()
}

// advance fires, in order, every deadline due at now.
func (m *Machine) advance(now time.Time, acts []Action) []Action {
	if m.daemon.awaiting && !now.Before(m.daemon.nextRead) {
		acts = m.readDue(now, acts)
	}
	acts = m.hookDue(now, acts)
	if m.shutdown && m.alive {
		if !m.stopSent && !now.Before(m.timeline.StopAt) {
			m.stopSent = true
			acts = append(acts, m.forwardAction(m.stopSig, "stop"))
			if m.phase == Quiescing || m.phase == Ready {
				acts = m.setPhase(acts, Draining)
			}
		}
		if !m.gracePast && !now.Before(m.timeline.GraceDeadline) {
			m.gracePast = true
			// A deadline signal at the instant of the SIGKILL is noise;
			// a second shutdown signal already sent one.
			if m.deadlineSig != 0 && m.timeline.GraceDeadline.Before(m.timeline.HardDeadline) && m.timeline.Signals < 2 {
				acts = append(acts, m.forwardAction(m.deadlineSig, "deadline"))
			}
		}
	}
	hard, ok := m.HardDeadline()
	if m.killedAt.IsZero() {
		if ok && !now.Before(hard) {
			m.killedAt, m.lastKillAt = now, now
			acts = append(acts, Action{Kind: ActKillTree, Signal: syscall.SIGKILL})
		}
		return acts
	}
	if !now.Before(m.giveUpAt()) {
		// Unkillable (uninterruptible sleep): exit anyway; as PID 1 the
		// kernel ends the namespace with us.
		if m.alive {
			m.outcome, m.code = DeadlineExceeded, ExitForced
		}
		return append(acts, m.enterStopped()...)
	}
	if !now.Before(m.lastKillAt.Add(m.opt.KillRetry)) {
		m.lastKillAt = now
		acts = append(acts, Action{Kind: ActKillTree, Signal: syscall.SIGKILL})
	}
	return acts
}

// enterStopped ends the run: the stopped phase, then the exit with the decided code.
func (m *Machine) enterStopped() []Action {
	m.done = true
	acts := m.setPhase(nil, Stopped)
	return append(acts, Action{Kind: ActExit, Code: m.code})
}

func (m *Machine) setPhase(acts []Action, p Phase) []Action {
	if m.phase == p {
		return acts
	}
	m.phase = p
	return append(acts, Action{Kind: ActPhase, Phase: p})
}

// KillDone records that a kill round the machine asked for was carried out
// at now: the next round, and for the first round the give-up, count from
// there, so that a round that took long (a crowded machine, a big tree)
// still leaves the tree its time to die.
func (m *Machine) KillDone(now time.Time) {
	if m.killedAt.IsZero() || now.Before(m.lastKillAt) {
		return
	}
	if m.waitFrom.IsZero() {
		m.waitFrom = now
	}
	m.lastKillAt = now
}

// Reaped records that processes of the tree were reaped at now. Once the
// tree is killed, lfinit waits for it as long as it keeps dying: the
// give-up counts from the last reap, so a big tree dying slowly on a
// crowded machine is reaped whole, and only processes that do not die
// (uninterruptible sleep) are given up on.
func (m *Machine) Reaped(now time.Time) {
	if !m.waitFrom.IsZero() && now.After(m.waitFrom) {
		m.waitFrom = now
	}
}

// giveUpAt is when lfinit stops waiting for a killed tree.
func (m *Machine) giveUpAt() time.Time {
	if m.waitFrom.IsZero() {
		return m.killedAt.Add(m.opt.KillGiveUp)
	}
	return m.waitFrom.Add(m.opt.KillGiveUp)
}

// KillGiveUp is how long after the first SIGKILL lfinit waits for the tree.
func (m *Machine) KillGiveUp() time.Duration { return m.opt.KillGiveUp }

// Code is the exit code lfinit will exit with, once Outcome is known.
func (m *Machine) Code() int { return m.code }

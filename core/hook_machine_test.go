package core

import (
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/budget"
)

// hookMachine is a ready machine with a shutdown hook of timeout hook.
func hookMachine(t *testing.T, grace, floor, drain, hook time.Duration) *Machine {
	t.Helper()
	m := NewMachine(Options{Budget: budget.Config{Grace: grace, Floor: floor, DrainDelay: drain, Hook: hook}})
	expect(t, "start", m.Started(t0, true), "phase:ready")
	return m
}

func expectHook(t *testing.T, m *Machine, want HookReport) {
	t.Helper()
	if got := m.Hook(); got != want {
		t.Fatalf("hook %+v, want %+v", got, want)
	}
}

// The hook starts at the first shutdown signal, in the quiesce; one that
// ends before the drain delay leaves the stop signal at the drain delay.
func TestHookEndsBeforeTheDrainDelay(t *testing.T) {
	m := hookMachine(t, 10*s, 250*ms, 3*s, 3*s)
	expect(t, "term", m.Signal(t0, syscall.SIGTERM), "phase:quiescing start-hook")
	expectHook(t, m, HookReport{Outcome: HookRunning})
	expectNext(t, m, at(3*s))
	expect(t, "hook exits 0", m.HookExited(at(s), 0), "")
	expectHook(t, m, HookReport{Outcome: HookSucceeded, Code: 0, Duration: s, Ended: true})
	expectNext(t, m, at(3*s))
	expect(t, "drain delay", m.Tick(at(3*s)), "stop:SIGTERM phase:draining")
	expect(t, "child exits", m.ChildExited(at(4*s), killed(syscall.SIGTERM), true), "phase:stopped exit:143")
}

// A hook that outlasts the drain delay holds the stop signal until it exits.
func TestHookHoldsTheStopSignal(t *testing.T) {
	m := hookMachine(t, 10*s, 250*ms, s, 5*s)
	expect(t, "term", m.Signal(t0, syscall.SIGTERM), "phase:quiescing start-hook")
	expectNext(t, m, at(5*s))
	expect(t, "drain delay passes", m.Tick(at(s)), "")
	expect(t, "hook exits", m.HookExited(at(2*s), 0), "stop:SIGTERM phase:draining")
	expect(t, "child exits", m.ChildExited(at(3*s), exited(0), true), "phase:stopped exit:0")
}

// With no drain delay the hook still gets its own timeout as a quiesce.
func TestHookWithoutDrainDelay(t *testing.T) {
	m := hookMachine(t, 10*s, 250*ms, 0, 2*s)
	expect(t, "term", m.Signal(t0, syscall.SIGTERM), "phase:quiescing start-hook")
	expect(t, "hook exits", m.HookExited(at(500*ms), 0), "stop:SIGTERM phase:draining")
}

// At its timeout the hook is killed and the stop signal goes at once,
// without waiting for the hook to be reaped.
func TestHookKilledAtItsTimeout(t *testing.T) {
	m := hookMachine(t, 10*s, 250*ms, s, 4*s)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "timeout", m.Tick(at(4*s)), "kill-hook:timeout stop:SIGTERM phase:draining")
	expectHook(t, m, HookReport{Outcome: HookTimedOut})
	expectNext(t, m, at(10*s))
	expect(t, "hook reaped", m.HookExited(at(4*s+ms), killed(syscall.SIGKILL)), "")
	expectHook(t, m, HookReport{Outcome: HookTimedOut, Code: 137, Duration: 4*s + ms, Ended: true})
	expect(t, "child exits", m.ChildExited(at(5*s), exited(0), true), "phase:stopped exit:0")
}

// A hook that fails is reported; lfinit's exit code stays the child's.
func TestHookFailureKeepsTheChildsCode(t *testing.T) {
	m := hookMachine(t, 10*s, 250*ms, 0, 2*s)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "hook fails", m.HookExited(at(100*ms), exited(3)), "stop:SIGTERM phase:draining")
	expectHook(t, m, HookReport{Outcome: HookFailed, Code: 3, Duration: 100 * ms, Ended: true})
	expect(t, "child exits", m.ChildExited(at(s), exited(7), true), "phase:stopped exit:7")
	if m.Outcome() != Graceful {
		t.Fatalf("outcome %s", m.Outcome())
	}
}

// A hook that cannot start (127) is a failed hook, the stop follows at the drain delay.
func TestHookThatCannotStart(t *testing.T) {
	m := hookMachine(t, 10*s, 250*ms, 2*s, 2*s)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "not found", m.HookExited(t0, 127), "")
	expectHook(t, m, HookReport{Outcome: HookFailed, Code: 127, Ended: true})
	expect(t, "drain delay", m.Tick(at(2*s)), "stop:SIGTERM phase:draining")
}

// A second shutdown signal during the hook kills it at once and forwards
// the stop signal at once, before the drain delay.
func TestSecondSignalEndsTheHook(t *testing.T) {
	m := hookMachine(t, 10*s, 250*ms, 3*s, 3*s)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "second term", m.Signal(at(s), syscall.SIGTERM), "kill-hook:hurry stop:SIGTERM phase:draining")
	expectHook(t, m, HookReport{Outcome: HookCutShort})
	expectNext(t, m, at(s+250*ms))
	expect(t, "hook reaped", m.HookExited(at(s), killed(syscall.SIGKILL)), "")
	expectHook(t, m, HookReport{Outcome: HookCutShort, Code: 137, Duration: s, Ended: true})
	expect(t, "third term", m.Signal(at(s+100*ms), syscall.SIGTERM), "deadline:SIGTERM")
}

// Past the drain delay, with the stop still held by the hook, a second
// signal forwards the stop signal (not the deadline signal).
func TestSecondSignalPastTheDrainDelayForwardsTheStop(t *testing.T) {
	m := hookMachine(t, 10*s, 250*ms, s, 5*s)
	m.Signal(t0, syscall.SIGTERM)
	m.Tick(at(s))
	expect(t, "second term", m.Signal(at(2*s), syscall.SIGTERM), "kill-hook:hurry stop:SIGTERM phase:draining")
	if hard, _ := m.HardDeadline(); !hard.Equal(at(2*s + 250*ms)) {
		t.Fatalf("hard deadline %v", hard.Sub(t0))
	}
}

// The hook runs once: a later shutdown signal does not start it again.
func TestHookRunsOnce(t *testing.T) {
	m := hookMachine(t, 10*s, 250*ms, 0, s)
	m.Signal(t0, syscall.SIGTERM)
	m.HookExited(at(100*ms), 0)
	expect(t, "second term", m.Signal(at(200*ms), syscall.SIGINT), "deadline:SIGTERM")
}

// A shutdown signal before the child is ready aborts the start: no
// quiesce, so no hook (nothing was routed to the child yet).
func TestNoHookOnStartupAbort(t *testing.T) {
	m := NewMachine(Options{Budget: budget.Config{Grace: 10 * s, Floor: 250 * ms, Hook: 2 * s}})
	expect(t, "start", m.Started(t0, false), "phase:starting")
	expect(t, "term", m.Signal(t0, syscall.SIGTERM), "phase:aborting-startup stop:SIGTERM")
	expectHook(t, m, HookReport{})
}

// No hook either when the child already exited on its own.
func TestNoHookAfterTheChildExited(t *testing.T) {
	m := hookMachine(t, 10*s, 250*ms, 0, 2*s)
	expect(t, "exit", m.ChildExited(t0, exited(1), false), "phase:cleaning-up term-tree")
	expect(t, "term", m.Signal(at(10*ms), syscall.SIGTERM), "")
	expectHook(t, m, HookReport{})
}

// A hook still alive at the hard deadline dies with the tree; it never
// changes the exit code.
func TestHookIsKilledWithTheTree(t *testing.T) {
	m := hookMachine(t, 2*s, 250*ms, 0, s)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "timeout", m.Tick(at(s)), "kill-hook:timeout stop:SIGTERM phase:draining")
	expect(t, "grace", m.Tick(at(2*s)), "deadline:SIGTERM")
	expect(t, "hard", m.Tick(at(2*s+250*ms)), "kill-tree")
	expect(t, "child killed", m.ChildExited(at(2*s+251*ms), killed(syscall.SIGKILL), false), "phase:cleaning-up")
	m.HookExited(at(2*s+252*ms), killed(syscall.SIGKILL))
	expect(t, "empty", m.TreeEmpty(at(2*s+252*ms)), "phase:stopped exit:1")
	expectHook(t, m, HookReport{Outcome: HookTimedOut, Code: 137, Duration: 2*s + 252*ms, Ended: true})
}

// The child exiting during the hook: the hook's timeout still applies.
func TestChildExitsDuringTheHook(t *testing.T) {
	m := hookMachine(t, 10*s, 250*ms, 0, 2*s)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "child exits", m.ChildExited(at(s), exited(0), false), "phase:cleaning-up term-tree")
	expectNext(t, m, at(2*s))
	expect(t, "hook timeout", m.Tick(at(2*s)), "kill-hook:timeout")
	m.HookExited(at(2*s), killed(syscall.SIGKILL))
	expect(t, "empty", m.TreeEmpty(at(2*s)), "phase:stopped exit:0")
}

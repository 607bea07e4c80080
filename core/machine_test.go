package core

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/budget"
	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/reaper"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

const (
	ms = time.Millisecond
	s  = time.Second
)

// exited and killed are a child's exit code as the loop decodes it from
// the kernel's wait status (reaper.ExitCode: 128+N for signal N).
func exited(code int) int           { return reaper.ExitCode(unix.WaitStatus(code << 8)) }
func killed(sig syscall.Signal) int { return reaper.ExitCode(unix.WaitStatus(sig)) }

// show renders actions compactly so expectations read like the timeline.
func show(acts []Action) string {
	var parts []string
	for _, a := range acts {
		switch a.Kind {
		case ActPhase:
			parts = append(parts, "phase:"+string(a.Phase))
		case ActForward:
			if a.Tree {
				parts = append(parts, "tree-"+a.Why+":"+forward.Name(a.Signal))
				continue
			}
			parts = append(parts, a.Why+":"+forward.Name(a.Signal))
		case ActReadPidfile:
			parts = append(parts, "read-pidfile")
		case ActPidfileFailed:
			parts = append(parts, "pidfile-failed")
		case ActTermTree:
			parts = append(parts, "term-tree")
		case ActKillTree:
			parts = append(parts, "kill-tree")
		case ActStartHook:
			parts = append(parts, "start-hook")
		case ActKillHook:
			parts = append(parts, "kill-hook:"+a.Why)
		case ActExit:
			parts = append(parts, fmt.Sprintf("exit:%d", a.Code))
		}
	}
	return strings.Join(parts, " ")
}

func expect(t *testing.T, step string, acts []Action, want string) {
	t.Helper()
	if got := show(acts); got != want {
		t.Fatalf("%s: actions %q, want %q", step, got, want)
	}
}

func expectNext(t *testing.T, m *Machine, want time.Time) {
	t.Helper()
	next, ok := m.Next()
	if want.IsZero() {
		if ok {
			t.Fatalf("Next = %v, want nothing scheduled", next.Sub(t0))
		}
		return
	}
	if !ok || !next.Equal(want) {
		t.Fatalf("Next = %v (%v), want t0%+v", next.Sub(t0), ok, want.Sub(t0))
	}
}

func newMachine(grace, floor, drain time.Duration) *Machine {
	return NewMachine(Options{Budget: budget.Config{Grace: grace, Floor: floor, DrainDelay: drain}})
}

func TestChildExitsOnItsOwn(t *testing.T) {
	m := newMachine(8*s, 250*ms, 0)
	expect(t, "start", m.Started(t0, true), "phase:ready")
	expectNext(t, m, time.Time{})
	expect(t, "exit", m.ChildExited(at(s), exited(3), true), "phase:stopped exit:3")
	if m.Outcome() != ChildExited {
		t.Fatalf("outcome %q", m.Outcome())
	}
	expect(t, "late signal", m.Signal(at(2*s), syscall.SIGTERM), "")
}

// TestChildExitCodePassesThrough: with no shutdown asked, the machine's
// rule is that lfinit exits with the child's code, whatever it is (the
// 128+N of a signal death included, which reaper.ExitCode decides).
func TestChildExitCodePassesThrough(t *testing.T) {
	for code := 0; code < 256; code++ {
		m := newMachine(8*s, 250*ms, 0)
		m.Started(t0, true)
		expect(t, fmt.Sprintf("exit %d", code), m.ChildExited(at(s), code, true), fmt.Sprintf("phase:stopped exit:%d", code))
		if m.Outcome() != ChildExited || m.Code() != code {
			t.Fatalf("exit %d: outcome %s, code %d", code, m.Outcome(), m.Code())
		}
	}
	m := newMachine(8*s, 250*ms, 0)
	m.Started(t0, true)
	expect(t, "SIGSEGV", m.ChildExited(at(s), killed(syscall.SIGSEGV), true), "phase:stopped exit:139")
}

func TestRelayOnlyWhileTheChildLives(t *testing.T) {
	m := newMachine(8*s, 250*ms, 0)
	m.Started(t0, true)
	expect(t, "usr1", m.Signal(at(s), syscall.SIGUSR1), "relay:SIGUSR1")
	expect(t, "hup", m.Signal(at(s), syscall.SIGHUP), "relay:SIGHUP")
	expect(t, "exit", m.ChildExited(at(2*s), exited(0), false), "phase:cleaning-up term-tree")
	expect(t, "usr1 after exit", m.Signal(at(2*s), syscall.SIGUSR1), "")
}

func TestGracefulShutdownWithDrainDelay(t *testing.T) {
	m := newMachine(20*s, 250*ms, 5*s)
	m.Started(t0, true)
	expect(t, "TERM", m.Signal(at(10*s), syscall.SIGTERM), "phase:quiescing")
	expectNext(t, m, at(15*s))
	expect(t, "early tick", m.Tick(at(14*s)), "")
	expect(t, "drain", m.Tick(at(15*s)), "stop:SIGTERM phase:draining")
	expectNext(t, m, at(30*s))
	expect(t, "exit", m.ChildExited(at(16*s), killed(syscall.SIGTERM), true), "phase:stopped exit:143")
	if m.Outcome() != Graceful {
		t.Fatalf("outcome %q", m.Outcome())
	}
}

func TestExitMapRemapsTheChildsCode(t *testing.T) {
	m := NewMachine(Options{Budget: budget.Default(), ExitMap: map[int]int{143: 0}})
	m.Started(t0, true)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "exit", m.ChildExited(at(s), killed(syscall.SIGTERM), true), "phase:stopped exit:0")
}

func TestChildThatIgnoresTermIsKilledAtTheHardDeadline(t *testing.T) {
	m := newMachine(2*s, 250*ms, 0)
	m.Started(t0, true)
	expect(t, "TERM", m.Signal(t0, syscall.SIGTERM), "stop:SIGTERM phase:draining")
	expectNext(t, m, at(2*s))
	expect(t, "grace", m.Tick(at(2*s)), "deadline:SIGTERM")
	expectNext(t, m, at(2250*ms))
	expect(t, "hard", m.Tick(at(2250*ms)), "kill-tree")
	expectNext(t, m, at(2300*ms))
	expect(t, "retry", m.Tick(at(2300*ms)), "kill-tree")
	expect(t, "reaped", m.ChildExited(at(2310*ms), killed(syscall.SIGKILL), false), "phase:cleaning-up")
	expect(t, "empty", m.TreeEmpty(at(2320*ms)), "phase:stopped exit:1")
	if m.Outcome() != DeadlineExceeded {
		t.Fatalf("outcome %q", m.Outcome())
	}
}

func TestDyingWithinTheFloorIsStillDeadlineExceeded(t *testing.T) {
	m := newMachine(2*s, 250*ms, 0)
	m.Started(t0, true)
	m.Signal(t0, syscall.SIGTERM)
	m.Tick(at(2 * s))
	expect(t, "exit in floor", m.ChildExited(at(2100*ms), exited(0), true), "phase:stopped exit:1")
}

func TestSecondSignalWhileQuiescingForwardsAtOnce(t *testing.T) {
	m := newMachine(20*s, 250*ms, 5*s)
	m.Started(t0, true)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "INT", m.Signal(at(s), syscall.SIGINT), "stop:SIGTERM phase:draining")
	expectNext(t, m, at(1250*ms))
	expect(t, "hard", m.Tick(at(1250*ms)), "kill-tree")
}

func TestSecondSignalWhileDrainingSendsDeadlineSignalAndShortens(t *testing.T) {
	m := newMachine(20*s, 500*ms, 0)
	m.Started(t0, true)
	m.Signal(t0, syscall.SIGINT)
	expect(t, "INT again", m.Signal(at(3*s), syscall.SIGINT), "deadline:SIGINT")
	expectNext(t, m, at(3500*ms))
	expect(t, "third", m.Signal(at(3100*ms), syscall.SIGTERM), "deadline:SIGINT")
	expectNext(t, m, at(3500*ms))
	expect(t, "exit", m.ChildExited(at(3200*ms), exited(130), true), "phase:stopped exit:1")
}

func TestStopAndDeadlineSignalRewrites(t *testing.T) {
	m := NewMachine(Options{Budget: budget.Config{Grace: 2 * s, Floor: s}, StopSignal: syscall.SIGQUIT, DeadlineSignal: syscall.SIGUSR2})
	m.Started(t0, true)
	expect(t, "TERM", m.Signal(t0, syscall.SIGTERM), "stop:SIGQUIT phase:draining")
	expect(t, "grace", m.Tick(at(2*s)), "deadline:SIGUSR2")
}

func TestNoDeadlineSignal(t *testing.T) {
	m := NewMachine(Options{Budget: budget.Config{Grace: 2 * s, Floor: s}, NoDeadline: true})
	m.Started(t0, true)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "second", m.Signal(at(s), syscall.SIGTERM), "")
	expect(t, "hard", m.Tick(at(2*s)), "kill-tree")
}

func TestCustomShutdownSignals(t *testing.T) {
	m := NewMachine(Options{Budget: budget.Default(), ShutdownSignals: []syscall.Signal{syscall.SIGQUIT}})
	m.Started(t0, true)
	expect(t, "TERM is relayed", m.Signal(t0, syscall.SIGTERM), "relay:SIGTERM")
	expect(t, "QUIT shuts down", m.Signal(t0, syscall.SIGQUIT), "stop:SIGQUIT phase:draining")
}

func TestStartupAbortGetsTheFloorOnly(t *testing.T) {
	m := newMachine(20*s, 300*ms, 5*s)
	expect(t, "start", m.Started(t0, false), "phase:starting")
	expect(t, "TERM", m.Signal(at(s), syscall.SIGTERM), "phase:aborting-startup stop:SIGTERM")
	expectNext(t, m, at(1300*ms))
	expect(t, "exit", m.ChildExited(at(1200*ms), exited(7), true), "phase:stopped exit:7")
	if m.Outcome() != Graceful {
		t.Fatalf("outcome %q", m.Outcome())
	}
}

func TestStartupAbortTooSlowIsKilled(t *testing.T) {
	m := newMachine(20*s, 300*ms, 5*s)
	m.Started(t0, false)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "hard", m.Tick(at(300*ms)), "kill-tree")
	expect(t, "exit", m.ChildExited(at(310*ms), killed(syscall.SIGKILL), true), "phase:stopped exit:1")
}

func TestReadyAfterStarting(t *testing.T) {
	m := newMachine(8*s, 250*ms, 0)
	m.Started(t0, false)
	expect(t, "ready", m.MarkReady(at(s)), "phase:ready")
	expect(t, "ready twice", m.MarkReady(at(s)), "")
	expect(t, "TERM", m.Signal(at(2*s), syscall.SIGTERM), "stop:SIGTERM phase:draining")
}

func TestLeftoversAfterTheChildExitedAreTermedThenKilled(t *testing.T) {
	m := newMachine(8*s, 250*ms, 0)
	m.Started(t0, true)
	expect(t, "exit", m.ChildExited(at(s), exited(4), false), "phase:cleaning-up term-tree")
	expectNext(t, m, at(1250*ms))
	expect(t, "floor", m.Tick(at(1250*ms)), "kill-tree")
	expect(t, "empty", m.TreeEmpty(at(1260*ms)), "phase:stopped exit:4")
	if m.Outcome() != ChildExited {
		t.Fatalf("outcome %q", m.Outcome())
	}
}

func TestLeftoversDuringShutdownGetTheHardDeadline(t *testing.T) {
	m := newMachine(5*s, s, 0)
	m.Started(t0, true)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "exit", m.ChildExited(at(s), exited(0), false), "phase:cleaning-up term-tree")
	expectNext(t, m, at(6*s))
	expect(t, "hard", m.Tick(at(6*s)), "kill-tree")
	expect(t, "empty", m.TreeEmpty(at(6*s)), "phase:stopped exit:0")
	if m.Outcome() != Graceful {
		t.Fatalf("outcome %q", m.Outcome())
	}
}

func TestUnkillableTreeGivesUp(t *testing.T) {
	m := newMachine(s, 0, 0)
	m.Started(t0, true)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "hard", m.Tick(at(s)), "kill-tree")
	expectNext(t, m, at(s+50*ms))
	expect(t, "give up", m.Tick(at(2*s)), "phase:stopped exit:1")
	expectNext(t, m, time.Time{})
}

// TestSlowKillRoundKeepsItsGiveUp: a kill round that took 700 ms (a
// crowded machine) still leaves the tree its full second to die, counted
// from when the round was carried out; later rounds count from theirs.
func TestSlowKillRoundKeepsItsGiveUp(t *testing.T) {
	m := newMachine(s, 0, 0)
	m.Started(t0, true)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "hard", m.Tick(at(s)), "kill-tree")
	m.KillDone(at(s + 700*ms))
	expectNext(t, m, at(s+750*ms))
	expect(t, "again", m.Tick(at(s+750*ms)), "kill-tree")
	m.KillDone(at(s + 760*ms))
	expect(t, "not yet", m.Tick(at(2*s+100*ms)), "kill-tree")
	m.KillDone(at(2*s + 100*ms))
	expect(t, "give up", m.Tick(at(2*s+700*ms)), "phase:stopped exit:1")
}

// TestDyingTreeIsWaitedFor: while the killed tree keeps dying (reaps keep
// coming), lfinit waits; one give-up period after the last reap it stops.
func TestDyingTreeIsWaitedFor(t *testing.T) {
	m := newMachine(s, 0, 0)
	m.Started(t0, true)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "hard", m.Tick(at(s)), "kill-tree")
	m.KillDone(at(s))
	for i := time.Duration(1); i <= 4; i++ {
		m.Reaped(at(s + i*800*ms))
		m.Tick(at(s + i*800*ms))
		m.KillDone(at(s + i*800*ms))
	}
	expectNext(t, m, at(4*s+250*ms))
	expect(t, "give up", m.Tick(at(5*s+200*ms)), "phase:stopped exit:1")
}

func TestLateWakeFiresEverythingDue(t *testing.T) {
	m := newMachine(2*s, s, 0)
	m.Started(t0, true)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "late tick", m.Tick(at(5*s)), "deadline:SIGTERM kill-tree")
}

func TestFailedToStart(t *testing.T) {
	m := newMachine(8*s, 250*ms, 0)
	expect(t, "fail", m.FailedToStart(127), "phase:stopped exit:127")
	if m.Outcome() != Failed {
		t.Fatalf("outcome %q", m.Outcome())
	}
}

// TestNeverZeroForAForcedStop drives many timings and checks that a child
// alive at its grace deadline never yields a clean exit code.
func TestNeverZeroForAForcedStop(t *testing.T) {
	for exitAt := 0 * ms; exitAt <= 4*s; exitAt += 50 * ms {
		m := NewMachine(Options{Budget: budget.Config{Grace: 2 * s, Floor: s}, ExitMap: map[int]int{143: 0}})
		m.Started(t0, true)
		m.Signal(t0, syscall.SIGTERM)
		for tick := 0 * ms; tick < exitAt; tick += 50 * ms {
			m.Tick(at(tick))
		}
		acts := m.ChildExited(at(exitAt), killed(syscall.SIGTERM), true)
		code := acts[len(acts)-1].Code
		if forced := exitAt >= 2*s; forced && code == 0 || !forced && code != 0 {
			t.Fatalf("child exits at %v: code %d, outcome %s", exitAt, code, m.Outcome())
		}
	}
}

func rewriting(grace, floor time.Duration, pairs ...syscall.Signal) *Machine {
	rw := map[syscall.Signal]syscall.Signal{}
	for i := 0; i+1 < len(pairs); i += 2 {
		rw[pairs[i]] = pairs[i+1]
	}
	return NewMachine(Options{Budget: budget.Config{Grace: grace, Floor: floor}, Rewrite: rw})
}

func TestRewriteRelaysTheNewSignal(t *testing.T) {
	m := rewriting(8*s, 250*ms, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH, syscall.SIGHUP)
	m.Started(t0, true)
	expect(t, "USR1", m.Signal(at(s), syscall.SIGUSR1), "relay:SIGUSR2")
	expect(t, "WINCH", m.Signal(at(s), syscall.SIGWINCH), "relay:SIGHUP")
	expect(t, "USR2 is not rewritten", m.Signal(at(s), syscall.SIGUSR2), "relay:SIGUSR2")
	if m.ShuttingDown() {
		t.Fatal("a relayed rewrite started a shutdown")
	}
}

func TestRewriteToZeroDropsTheSignal(t *testing.T) {
	m := rewriting(8*s, 250*ms, syscall.SIGINT, 0, syscall.SIGHUP, 0)
	m.Started(t0, true)
	expect(t, "INT", m.Signal(at(s), syscall.SIGINT), "")
	expect(t, "HUP", m.Signal(at(s), syscall.SIGHUP), "")
	if m.IsShutdownSignal(syscall.SIGINT) || !m.Drops(syscall.SIGINT) || m.Drops(syscall.SIGTERM) {
		t.Fatal("a dropped INT must not count as a shutdown signal (readiness would drop)")
	}
	if m.ShuttingDown() || m.Phase() != Ready {
		t.Fatalf("a dropped INT started a shutdown: phase %s", m.Phase())
	}
	expectNext(t, m, time.Time{})
	expect(t, "TERM still shuts down", m.Signal(at(2*s), syscall.SIGTERM), "stop:SIGTERM phase:draining")
	expect(t, "INT cannot hurry", m.Signal(at(3*s), syscall.SIGINT), "")
	expectNext(t, m, at(10*s))
}

func TestRewrittenShutdownSignalIsTheStopAndDeadlineSignal(t *testing.T) {
	m := rewriting(2*s, s, syscall.SIGTERM, syscall.SIGQUIT)
	m.Started(t0, true)
	expect(t, "TERM", m.Signal(t0, syscall.SIGTERM), "stop:SIGQUIT phase:draining")
	if m.Trigger() != syscall.SIGTERM {
		t.Fatalf("trigger %v, want the signal received (TERM)", m.Trigger())
	}
	expectNext(t, m, at(2*s))
	expect(t, "grace", m.Tick(at(2*s)), "deadline:SIGQUIT")
	expect(t, "hard", m.Tick(at(3*s)), "kill-tree")
}

func TestRewrittenShutdownSignalHurries(t *testing.T) {
	m := rewriting(20*s, 500*ms, syscall.SIGTERM, syscall.SIGQUIT)
	m.Started(t0, true)
	m.Signal(t0, syscall.SIGTERM)
	expect(t, "TERM again", m.Signal(at(s), syscall.SIGTERM), "deadline:SIGQUIT")
	expectNext(t, m, at(1500*ms))
}

func TestStopSignalWinsOverARewrite(t *testing.T) {
	m := NewMachine(Options{Budget: budget.Config{Grace: 2 * s, Floor: s}, StopSignal: syscall.SIGWINCH,
		Rewrite: map[syscall.Signal]syscall.Signal{syscall.SIGTERM: syscall.SIGQUIT}})
	m.Started(t0, true)
	expect(t, "TERM", m.Signal(t0, syscall.SIGTERM), "stop:SIGWINCH phase:draining")
	expect(t, "grace", m.Tick(at(2*s)), "deadline:SIGWINCH")
}

func TestRewriteToAShutdownSignalIsOnlyARelay(t *testing.T) {
	m := rewriting(8*s, 250*ms, syscall.SIGHUP, syscall.SIGTERM)
	m.Started(t0, true)
	expect(t, "HUP", m.Signal(at(s), syscall.SIGHUP), "relay:SIGTERM")
	if m.ShuttingDown() {
		t.Fatal("HUP:TERM started a shutdown")
	}
	expectNext(t, m, time.Time{})
	expect(t, "exit", m.ChildExited(at(2*s), killed(syscall.SIGTERM), true), "phase:stopped exit:143")
	if m.Outcome() != ChildExited {
		t.Fatalf("outcome %q, want child-exited", m.Outcome())
	}
}

func TestRewriteDuringStartupAbort(t *testing.T) {
	m := rewriting(20*s, 300*ms, syscall.SIGINT, syscall.SIGUSR1)
	m.Started(t0, false)
	expect(t, "INT", m.Signal(at(s), syscall.SIGINT), "phase:aborting-startup stop:SIGUSR1")
}

func TestStopForIsAShutdownOfLfinitsOwn(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := NewMachine(Options{Budget: budget.Config{Grace: 8 * time.Second, Floor: 250 * time.Millisecond}, StopSignal: syscall.SIGQUIT})
	m.Started(t0, true)
	acts := m.StopFor(t0.Add(time.Second), "watchdog")
	if !m.ShuttingDown() || !m.OwnStop() || m.Reason() != "watchdog" {
		t.Fatalf("shutting down %v, own %v, reason %q", m.ShuttingDown(), m.OwnStop(), m.Reason())
	}
	if len(acts) == 0 || acts[0].Kind != ActForward || acts[0].Signal != syscall.SIGQUIT {
		t.Fatalf("actions %+v, want the stop signal forwarded", acts)
	}
	if hard, _ := m.HardDeadline(); hard != t0.Add(time.Second+8250*time.Millisecond) {
		t.Fatalf("hard deadline %v", hard)
	}
	if m.StopFor(t0.Add(2*time.Second), "watchdog") != nil {
		t.Fatal("a second StopFor acted")
	}
	if acts := m.Signal(t0.Add(3*time.Second), syscall.SIGTERM); m.Reason() != "watchdog" || len(acts) == 0 {
		t.Fatalf("a later SIGTERM: reason %q, actions %+v (want it to hurry)", m.Reason(), acts)
	}
}

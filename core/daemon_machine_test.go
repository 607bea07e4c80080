package core

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/budget"
	"github.com/light-fabric/lfinit/exitcode"
)

func daemonMachine(mode Daemon, timeout time.Duration) *Machine {
	return NewMachine(Options{Budget: budget.Config{Grace: 8 * s, Floor: 250 * ms}, Daemon: mode, PidfileTimeout: timeout})
}

func expectOutcome(t *testing.T, m *Machine, want Outcome, code int) {
	t.Helper()
	if m.Outcome() != want || m.Code() != code {
		t.Fatalf("outcome %q exit %d, want %q exit %d", m.Outcome(), m.Code(), want, code)
	}
}

func TestPidfileDaemonIsFollowedThenStoppedGracefully(t *testing.T) {
	m := daemonMachine(DaemonPidfile, 5*s)
	expect(t, "start", m.Started(t0, true), "phase:starting")
	expect(t, "start command exits 0", m.ChildExited(at(s), exited(0), false), "read-pidfile")
	if m.Phase() != Starting {
		t.Fatalf("phase %q while the pidfile is awaited", m.Phase())
	}
	expect(t, "not there yet", m.PidfileChecked(at(s), "does not exist"), "")
	expectNext(t, m, at(s+20*ms))
	expect(t, "early tick", m.Tick(at(s+10*ms)), "")
	expect(t, "poll", m.Tick(at(s+20*ms)), "read-pidfile")
	expect(t, "adopt", m.Adopt(at(s+20*ms)), "phase:ready")
	expectNext(t, m, time.Time{})
	expect(t, "relay to the daemon", m.Signal(at(2*s), syscall.SIGHUP), "relay:SIGHUP")
	expect(t, "TERM", m.Signal(at(3*s), syscall.SIGTERM), "stop:SIGTERM phase:draining")
	expect(t, "daemon exits", m.ChildExited(at(4*s), killed(syscall.SIGTERM), true), "phase:stopped exit:143")
	expectOutcome(t, m, Graceful, 143)
}

func TestPidfileDaemonThatIgnoresTermIsKilled(t *testing.T) {
	m := daemonMachine(DaemonPidfile, 5*s)
	m.Started(t0, true)
	m.ChildExited(at(s), exited(0), false)
	expect(t, "adopt", m.Adopt(at(s)), "phase:ready")
	expect(t, "TERM", m.Signal(at(2*s), syscall.SIGTERM), "stop:SIGTERM phase:draining")
	expect(t, "grace", m.Tick(at(10*s)), "deadline:SIGTERM")
	expect(t, "hard", m.Tick(at(10*s+250*ms)), "kill-tree")
	expect(t, "killed", m.ChildExited(at(10*s+260*ms), killed(syscall.SIGKILL), true), "phase:stopped exit:1")
	expectOutcome(t, m, DeadlineExceeded, 1)
}

func TestPidfileDaemonExitsOnItsOwn(t *testing.T) {
	m := daemonMachine(DaemonPidfile, 5*s)
	m.Started(t0, true)
	m.ChildExited(at(s), exited(0), false)
	m.Adopt(at(s))
	expect(t, "daemon exits 3", m.ChildExited(at(9*s), exited(3), true), "phase:stopped exit:3")
	expectOutcome(t, m, ChildExited, 3)
}

func TestPidfileNeverValidFailsAtTheDeadlineAndCleansUp(t *testing.T) {
	m := daemonMachine(DaemonPidfile, 50*ms)
	m.Started(t0, true)
	expect(t, "exit 0", m.ChildExited(at(s), exited(0), false), "read-pidfile")
	expect(t, "garbage", m.PidfileChecked(at(s), "does not hold a process id"), "")
	expect(t, "20ms", m.Tick(at(s+20*ms)), "read-pidfile")
	expect(t, "40ms", m.Tick(at(s+40*ms)), "read-pidfile")
	expectNext(t, m, at(s+50*ms)) // the last read is at the deadline itself
	expect(t, "deadline", m.Tick(at(s+50*ms)), "read-pidfile")
	acts := m.PidfileChecked(at(s+50*ms), "names pid 7 (sh), which is not in lfinit's tree")
	expect(t, "gave up", acts, "pidfile-failed phase:cleaning-up term-tree")
	if !strings.Contains(acts[0].Why, "not in lfinit's tree") {
		t.Fatalf("the failure does not carry the problem: %q", acts[0].Why)
	}
	expectOutcome(t, m, Failed, exitcode.NoPidfile)
	expect(t, "no relay to a stranger", m.Signal(at(2*s), syscall.SIGHUP), "")
	expect(t, "a late pid is not adopted", m.Adopt(at(2*s)), "")
	// A leftover that ignores TERM is killed after the floor, as usual.
	expectNext(t, m, at(s+300*ms))
	expect(t, "floor", m.Tick(at(s+300*ms)), "kill-tree")
	expect(t, "gone", m.TreeEmpty(at(s+310*ms)), "phase:stopped exit:1")
}

func TestPidfileStartCommandLeavesNothing(t *testing.T) {
	m := daemonMachine(DaemonPidfile, 5*s)
	m.Started(t0, true)
	expect(t, "exit 0, tree empty", m.ChildExited(at(s), exited(0), true), "pidfile-failed phase:stopped exit:1")
	expectOutcome(t, m, Failed, 1)
}

func TestPidfileDaemonDiesBeforeAdoption(t *testing.T) {
	m := daemonMachine(DaemonPidfile, 5*s)
	m.Started(t0, true)
	m.ChildExited(at(s), exited(0), false)
	m.PidfileChecked(at(s), "does not exist")
	acts := m.TreeEmpty(at(s + 5*ms))
	expect(t, "tree empty", acts, "pidfile-failed phase:stopped exit:1")
	if !strings.Contains(acts[0].Why, "does not exist") || !strings.Contains(acts[0].Why, "no process is left") {
		t.Fatalf("problem %q", acts[0].Why)
	}
}

func TestPidfileStartCommandFails(t *testing.T) {
	m := daemonMachine(DaemonPidfile, 5*s)
	m.Started(t0, true)
	expect(t, "exit 4", m.ChildExited(at(s), exited(4), false), "phase:cleaning-up term-tree")
	expectOutcome(t, m, ChildExited, 4)
}

func TestShutdownWhileAwaitingThePidfileAborts(t *testing.T) {
	m := daemonMachine(DaemonPidfile, 5*s)
	m.Started(t0, true)
	m.ChildExited(at(s), exited(0), false)
	expect(t, "relay to the tree", m.Signal(at(s), syscall.SIGHUP), "tree-relay:SIGHUP")
	expect(t, "TERM", m.Signal(at(s+5*ms), syscall.SIGTERM), "phase:aborting-startup tree-stop:SIGTERM")
	expectNext(t, m, at(s+255*ms)) // no more reads: only the floor
	expect(t, "a late pid is not adopted", m.Adopt(at(s+10*ms)), "")
	expect(t, "gone", m.TreeEmpty(at(s+20*ms)), "phase:stopped exit:0")
	expectOutcome(t, m, Graceful, 0)

	m = daemonMachine(DaemonPidfile, 5*s)
	m.Started(t0, true)
	m.ChildExited(at(s), exited(0), false)
	m.Signal(at(s), syscall.SIGTERM)
	expect(t, "floor", m.Tick(at(s+250*ms)), "kill-tree")
	expect(t, "killed", m.TreeEmpty(at(s+260*ms)), "phase:stopped exit:1")
	expectOutcome(t, m, DeadlineExceeded, 1)
}

func TestShutdownWhileTheStartCommandRunsIsAStartupAbort(t *testing.T) {
	m := daemonMachine(DaemonPidfile, 5*s)
	m.Started(t0, true)
	expect(t, "TERM", m.Signal(at(s), syscall.SIGTERM), "phase:aborting-startup stop:SIGTERM")
	expect(t, "exit 0", m.ChildExited(at(s+10*ms), exited(0), false), "phase:cleaning-up term-tree")
	expect(t, "gone", m.TreeEmpty(at(s+20*ms)), "phase:stopped exit:0")
}

func TestPidfileWithReadinessGating(t *testing.T) {
	// The check passes while the start command still runs.
	m := daemonMachine(DaemonPidfile, 5*s)
	expect(t, "start", m.Started(t0, false), "phase:starting")
	expect(t, "check passes early", m.MarkReady(at(s)), "")
	m.ChildExited(at(2*s), exited(0), false)
	expect(t, "adopt", m.Adopt(at(2*s)), "phase:ready")

	// The check passes after the adoption.
	m = daemonMachine(DaemonPidfile, 5*s)
	m.Started(t0, false)
	m.ChildExited(at(s), exited(0), false)
	expect(t, "adopt", m.Adopt(at(s)), "")
	expect(t, "check passes", m.MarkReady(at(2*s)), "phase:ready")
}

func TestTreeModeStaysWhileTheTreeLives(t *testing.T) {
	m := daemonMachine(DaemonTree, 0)
	expect(t, "start", m.Started(t0, true), "phase:ready")
	expect(t, "exit 0", m.ChildExited(at(s), exited(0), false), "")
	if !m.FollowsTree() || m.Phase() != Ready {
		t.Fatalf("after the start command: follows tree %v, phase %q", m.FollowsTree(), m.Phase())
	}
	expect(t, "relay", m.Signal(at(2*s), syscall.SIGUSR1), "tree-relay:SIGUSR1")
	m.OtherExited(5)
	m.OtherExited(3)
	expect(t, "tree gone", m.TreeEmpty(at(3*s)), "phase:stopped exit:3")
	expectOutcome(t, m, ChildExited, 3)
}

func TestTreeModeShutdownAndDeadline(t *testing.T) {
	m := daemonMachine(DaemonTree, 0)
	m.Started(t0, true)
	m.ChildExited(at(s), exited(0), false)
	expect(t, "TERM", m.Signal(at(2*s), syscall.SIGTERM), "tree-stop:SIGTERM phase:draining")
	expect(t, "grace", m.Tick(at(10*s)), "tree-deadline:SIGTERM")
	expect(t, "hard", m.Tick(at(10*s+250*ms)), "kill-tree")
	m.OtherExited(137)
	expect(t, "gone", m.TreeEmpty(at(10*s+260*ms)), "phase:stopped exit:1")
	expectOutcome(t, m, DeadlineExceeded, 1)

	m = daemonMachine(DaemonTree, 0)
	m.Started(t0, true)
	m.ChildExited(at(s), exited(0), false)
	m.Signal(at(2*s), syscall.SIGTERM)
	m.OtherExited(143)
	expect(t, "gone in time", m.TreeEmpty(at(3*s)), "phase:stopped exit:143")
	expectOutcome(t, m, Graceful, 143)
}

func TestTreeModeStartCommandExitsDuringTheShutdown(t *testing.T) {
	m := daemonMachine(DaemonTree, 0)
	m.Started(t0, true)
	expect(t, "TERM", m.Signal(at(s), syscall.SIGTERM), "stop:SIGTERM phase:draining")
	expect(t, "exit 0", m.ChildExited(at(2*s), exited(0), false), "tree-stop:SIGTERM")
	expect(t, "gone", m.TreeEmpty(at(3*s)), "phase:stopped exit:0")
	expectOutcome(t, m, Graceful, 0)
}

func TestTreeModeOrdinaryExits(t *testing.T) {
	m := daemonMachine(DaemonTree, 0)
	m.Started(t0, true)
	expect(t, "exit 0, nothing left", m.ChildExited(at(s), exited(0), true), "phase:stopped exit:0")

	m = daemonMachine(DaemonTree, 0)
	m.Started(t0, true)
	expect(t, "exit 2", m.ChildExited(at(s), exited(2), false), "phase:cleaning-up term-tree")
	expectOutcome(t, m, ChildExited, 2)
}

func TestExitMapAppliesToTheTreesCode(t *testing.T) {
	m := NewMachine(Options{Budget: budget.Default(), Daemon: DaemonTree, ExitMap: map[int]int{143: 0}})
	m.Started(t0, true)
	m.ChildExited(at(s), exited(0), false)
	m.Signal(at(2*s), syscall.SIGTERM)
	m.OtherExited(143)
	expect(t, "gone", m.TreeEmpty(at(3*s)), "phase:stopped exit:0")
}

// FuzzMachineDaemon feeds any sequence of events to a machine following a
// pidfile or the tree, and checks: one exit at most and nothing after it;
// no SIGKILL before the hard deadline; no forward to a single process when
// there is none to follow; no pidfile read once a shutdown began; a failed
// or forced run never exits 0.
func FuzzMachineDaemon(f *testing.F) {
	f.Add([]byte{4, 0, 7, 1, 8, 0, 0, 5, 3, 200, 4, 143}, true, uint8(20))
	f.Add([]byte{4, 0, 9, 3, 3, 255, 3, 255, 5, 0}, true, uint8(5))
	f.Add([]byte{0, 1, 4, 0, 5, 0}, false, uint8(0))
	f.Fuzz(func(t *testing.T, events []byte, pidfile bool, timeout uint8) {
		mode := DaemonTree
		if pidfile {
			mode = DaemonPidfile
		}
		m := NewMachine(Options{Budget: budget.Config{Grace: 2 * s, Floor: 300 * ms}, Daemon: mode, PidfileTimeout: time.Duration(timeout) * 10 * ms})
		now := t0
		exits, startAlive, adoptedAlive := 0, true, false
		check := func(acts []Action) {
			for _, a := range acts {
				if exits > 0 {
					t.Fatalf("action %+v after exit", a)
				}
				switch a.Kind {
				case ActForward:
					if !a.Tree && !startAlive && !adoptedAlive {
						t.Fatalf("forward %v to a process that is not there", a.Signal)
					}
				case ActReadPidfile:
					if !pidfile || m.ShuttingDown() {
						t.Fatalf("pidfile read (pidfile %v, shutting down %v)", pidfile, m.ShuttingDown())
					}
				case ActKillTree:
					if h, ok := m.HardDeadline(); !ok || now.Before(h) {
						t.Fatalf("SIGKILL at %v before the hard deadline %v", now.Sub(t0), h.Sub(t0))
					}
				case ActExit:
					exits++
					o := m.Outcome()
					if (o == Failed || o == DeadlineExceeded) && a.Code != 1 {
						t.Fatalf("outcome %s with exit %d", o, a.Code)
					}
				}
			}
		}
		check(m.Started(now, true))
		for i := 0; i+1 < len(events); i += 2 {
			kind, arg := events[i]%10, events[i+1]
			now = now.Add(time.Duration(arg) * 10 * ms)
			switch kind {
			case 0, 1:
				check(m.Signal(now, []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP}[kind]))
			case 2, 3:
				check(m.Tick(now))
			case 4:
				if startAlive {
					startAlive = false
					check(m.ChildExited(now, exited(int(arg%3)), arg%5 == 0))
				} else if adoptedAlive {
					adoptedAlive = false
					check(m.ChildExited(now, exited(int(arg)), arg%2 == 0))
				}
			case 5:
				if !startAlive && !adoptedAlive {
					check(m.TreeEmpty(now))
				}
			case 6:
				m.OtherExited(int(arg))
			case 7:
				check(m.PidfileChecked(now, "does not exist"))
			case 8:
				before := m.daemon.adopted
				acts := m.Adopt(now)
				adoptedAlive = adoptedAlive || (!before && m.daemon.adopted)
				check(acts)
			case 9:
				check(m.MarkReady(now))
			}
		}
	})
}

func TestPidfileTimeoutZeroReadsOnce(t *testing.T) {
	m := daemonMachine(DaemonPidfile, 0)
	m.Started(t0, true)
	expect(t, "exit 0", m.ChildExited(at(s), exited(0), false), "read-pidfile")
	expect(t, "the one read fails", m.PidfileChecked(at(s), "does not exist"), "pidfile-failed phase:cleaning-up term-tree")

	m = daemonMachine(DaemonPidfile, 0)
	m.Started(t0, true)
	m.ChildExited(at(s), exited(0), false)
	expect(t, "the one read finds it", m.Adopt(at(s)), "phase:ready")
}

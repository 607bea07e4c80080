package core

import (
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/budget"
)

// FuzzMachine feeds the machine any sequence of events at any times and
// checks what must always hold: one exit at most and nothing after it, no
// forward to a reaped child, no SIGKILL before the hard deadline, a hard
// deadline that never moves later, and never a clean exit code for a child
// that was still alive at its grace deadline.
func FuzzMachine(f *testing.F) {
	f.Add([]byte{0, 10, 3, 200, 3, 255, 4, 1}, uint16(2000), uint16(250), uint16(0), true)
	f.Add([]byte{2, 1, 0, 5, 1, 5, 1, 5, 4, 0}, uint16(8000), uint16(250), uint16(1000), false)
	f.Add([]byte{4, 7, 3, 30, 5, 0}, uint16(1000), uint16(100), uint16(0), true)
	f.Fuzz(func(t *testing.T, events []byte, graceMs, floorMs, drainMs uint16, ready bool) {
		cfg := budget.Config{Grace: time.Duration(graceMs) * time.Millisecond, Floor: time.Duration(floorMs) * time.Millisecond, DrainDelay: time.Duration(drainMs) * time.Millisecond}
		if cfg.Validate() != nil {
			return
		}
		fuzzMachine(t, Options{Budget: cfg, ExitMap: map[int]int{143: 0}}, events, ready)
	})
}

// FuzzMachineHook is FuzzMachine with a shutdown hook (events of kind 7
// are its exit): it starts at most once, and only in the quiesce; the stop
// signal is never forwarded while it may still run; it is killed at its
// timeout at the latest, and only while it runs.
func FuzzMachineHook(f *testing.F) {
	f.Add([]byte{0, 0, 3, 50, 7, 1, 3, 255, 4, 2}, uint16(4000), uint16(250), uint16(1000), uint16(2000), true)
	f.Add([]byte{0, 0, 0, 10, 7, 0, 4, 1, 5, 0}, uint16(8000), uint16(100), uint16(0), uint16(500), true)
	f.Add([]byte{6, 1, 0, 0, 4, 0, 7, 3}, uint16(1000), uint16(100), uint16(0), uint16(300), false)
	f.Fuzz(func(t *testing.T, events []byte, graceMs, floorMs, drainMs, hookMs uint16, ready bool) {
		ms := func(v uint16) time.Duration { return time.Duration(v) * time.Millisecond }
		cfg := budget.Config{Grace: ms(graceMs), Floor: ms(floorMs), DrainDelay: ms(drainMs), Hook: ms(hookMs)}
		if cfg.Validate() != nil || cfg.Hook == 0 {
			return
		}
		fuzzMachine(t, Options{Budget: cfg}, events, ready)
	})
}

// FuzzMachineRewrite is FuzzMachine with signal rewrites picked by rw's
// bits: a dropped signal never yields an action, a relayed one reaches the
// child as its TO.
func FuzzMachineRewrite(f *testing.F) {
	f.Add([]byte{0, 10, 1, 3, 2, 3, 3, 200, 4, 1}, uint8(0b0011), true)
	f.Add([]byte{2, 1, 0, 5, 1, 5, 0, 5, 3, 255}, uint8(0b1100), true)
	f.Add([]byte{1, 1, 0, 1, 2, 1, 4, 0}, uint8(0b1111), false)
	f.Fuzz(func(t *testing.T, events []byte, rw uint8, ready bool) {
		rewrite := map[syscall.Signal]syscall.Signal{}
		for i, r := range [][2]syscall.Signal{{syscall.SIGINT, 0}, {syscall.SIGTERM, syscall.SIGQUIT}, {syscall.SIGUSR1, syscall.SIGTERM}, {syscall.SIGTERM, 0}} {
			if rw&(1<<i) != 0 {
				rewrite[r[0]] = r[1]
			}
		}
		fuzzMachine(t, Options{Budget: budget.Config{Grace: 2 * time.Second, Floor: 300 * time.Millisecond}, Rewrite: rewrite}, events, ready)
	})
}

// fuzzMachine runs events through a machine with opt and checks the
// invariants of FuzzMachine, and those of opt.Rewrite.
func fuzzMachine(t *testing.T, opt Options, events []byte, ready bool) {
	m := NewMachine(opt)
	now := t0
	exits, alive := 0, true
	var hard time.Time
	aliveAtGrace := false
	hookRuns, hookKilled, hookStarts := false, false, 0
	check := func(acts []Action) {
		for _, a := range acts {
			if exits > 0 {
				t.Fatalf("action %+v after exit", a)
			}
			switch a.Kind {
			case ActForward:
				if !alive {
					t.Fatalf("forward %v to a reaped child", a.Signal)
				}
				if a.Why == "stop" && hookRuns && !hookKilled {
					t.Fatalf("stop signal at %v while the hook may still run", now.Sub(t0))
				}
			case ActStartHook:
				hookStarts++
				if hookStarts > 1 || m.Phase() != Quiescing {
					t.Fatalf("hook start #%d in phase %s", hookStarts, m.Phase())
				}
				hookRuns = true
			case ActKillHook:
				if !hookRuns || hookKilled {
					t.Fatalf("hook killed (%s) while not running or already killed", a.Why)
				}
				hookKilled = true
			case ActKillTree:
				if h, ok := m.HardDeadline(); !ok || now.Before(h) {
					t.Fatalf("SIGKILL at %v before the hard deadline %v", now.Sub(t0), h.Sub(t0))
				}
			case ActExit:
				exits++
				if aliveAtGrace && a.Code != ExitForced {
					t.Fatalf("exit %d for a child alive at its grace deadline (outcome %s)", a.Code, m.Outcome())
				}
				if m.Outcome() == DeadlineExceeded && a.Code != ExitForced {
					t.Fatalf("deadline-exceeded with exit %d", a.Code)
				}
			}
		}
		if h, ok := m.HardDeadline(); ok && m.ShuttingDown() && alive {
			if !hard.IsZero() && h.After(hard) {
				t.Fatalf("hard deadline moved later: %v → %v", hard.Sub(t0), h.Sub(t0))
			}
			hard = h
		}
		if m.ShuttingDown() && alive && !now.Before(m.Timeline().GraceDeadline) {
			aliveAtGrace = true
		}
	}
	check(m.Started(now, ready))
	kinds := byte(7)
	if opt.Budget.Hook > 0 {
		kinds = 8
	}
	for i := 0; i+1 < len(events); i += 2 {
		kind, arg := events[i]%kinds, events[i+1]
		now = now.Add(time.Duration(arg) * 10 * time.Millisecond)
		// A child that is alive when an event comes at or past its
		// grace deadline was alive at the deadline.
		if m.ShuttingDown() && alive && !now.Before(m.Timeline().GraceDeadline) {
			aliveAtGrace = true
		}
		switch kind {
		case 0, 1, 2:
			sig := []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1}[kind]
			acts := m.Signal(now, sig)
			checkRewrite(t, opt, sig, acts, m.IsShutdownSignal(sig))
			check(acts)
		case 3:
			check(m.Tick(now))
		case 4:
			if alive {
				// The hook is in the tree: while it runs, the tree is not empty.
				acts := m.ChildExited(now, exited(int(arg)), arg%2 == 0 && !hookRuns)
				alive = false
				check(acts)
			}
		case 5:
			if !alive && !hookRuns {
				check(m.TreeEmpty(now))
			}
		case 6:
			check(m.MarkReady(now))
		case 7:
			if hookRuns {
				hookRuns = false
				check(m.HookExited(now, int(arg)))
			}
		}
		if kind == 3 && exits == 0 && hookRuns && !hookKilled && !now.Before(m.Timeline().HookDeadline) {
			t.Fatalf("hook alive and not killed at %v, past its deadline %v", now.Sub(t0), m.Timeline().HookDeadline.Sub(t0))
		}
		if next, ok := m.Next(); ok && exits == 0 && next.Before(t0) {
			t.Fatalf("next wake-up %v before the start", next)
		}
	}
}

// checkRewrite: a signal rewritten to 0 yields nothing, and a relayed one
// is forwarded as its TO.
func checkRewrite(t *testing.T, opt Options, sig syscall.Signal, acts []Action, shutdown bool) {
	t.Helper()
	to, ok := opt.Rewrite[sig]
	if !ok {
		to = sig
	}
	if to == 0 && len(acts) > 0 {
		t.Fatalf("%v is dropped, yet it gave %+v", sig, acts)
	}
	for _, a := range acts {
		if !shutdown && a.Kind == ActForward && (a.Why != "relay" || a.Signal != to) {
			t.Fatalf("%v relayed as %+v, want %v", sig, a, to)
		}
	}
}

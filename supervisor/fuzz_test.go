package supervisor

import (
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/budget"
	"github.com/light-fabric/lfinit/statusfile"
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
			case ActKillTree:
				if h, ok := m.HardDeadline(); !ok || now.Before(h) {
					t.Fatalf("SIGKILL at %v before the hard deadline %v", now.Sub(t0), h.Sub(t0))
				}
			case ActExit:
				exits++
				if aliveAtGrace && a.Code != ExitForced {
					t.Fatalf("exit %d for a child alive at its grace deadline (outcome %s)", a.Code, m.Outcome())
				}
				if m.Outcome() == statusfile.DeadlineExceeded && a.Code != ExitForced {
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
	for i := 0; i+1 < len(events); i += 2 {
		kind, arg := events[i]%7, events[i+1]
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
				acts := m.ChildExited(now, exited(int(arg)), arg%2 == 0)
				alive = false
				check(acts)
			}
		case 5:
			if !alive {
				check(m.TreeEmpty(now))
			}
		case 6:
			check(m.MarkReady(now))
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

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
		m := NewMachine(Options{Budget: cfg, ExitMap: map[int]int{143: 0}})
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
			case 0:
				check(m.Signal(now, syscall.SIGTERM))
			case 1:
				check(m.Signal(now, syscall.SIGINT))
			case 2:
				check(m.Signal(now, syscall.SIGUSR1))
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
	})
}

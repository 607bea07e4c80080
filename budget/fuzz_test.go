package budget

import (
	"testing"
	"time"
)

// FuzzTimeline checks the invariants of any timeline with any number of
// further signals: deadlines never extend, stop ≤ grace ≤ hard, nothing
// before the first signal, and a hard deadline never past t0+grace+floor.
func FuzzTimeline(f *testing.F) {
	f.Add(int64(8000), int64(250), int64(0), true, int64(100), int64(5000), int64(9000))
	f.Add(int64(20000), int64(1000), int64(5000), true, int64(1000), int64(1100), int64(0))
	f.Add(int64(2000), int64(0), int64(0), false, int64(0), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, graceMs, floorMs, drainMs int64, ready bool, a, b, c int64) {
		const limit = int64(24 * time.Hour / time.Millisecond)
		if graceMs < 0 || floorMs < 0 || drainMs < 0 || graceMs > limit || floorMs > limit || drainMs > limit {
			return
		}
		cfg := Config{Grace: time.Duration(graceMs) * time.Millisecond, Floor: time.Duration(floorMs) * time.Millisecond, DrainDelay: time.Duration(drainMs) * time.Millisecond}
		if cfg.Validate() != nil {
			return
		}
		tl := Start(cfg, t0, ready)
		check := func(tl Timeline) {
			if tl.StopAt.Before(tl.SignalAt) || tl.GraceDeadline.Before(tl.StopAt) || tl.HardDeadline.Before(tl.GraceDeadline) {
				t.Fatalf("out of order: %+v", tl)
			}
			if tl.HardDeadline.After(t0.Add(cfg.Total())) {
				t.Fatalf("hard deadline past t0+grace+floor: %+v", tl)
			}
		}
		check(tl)
		at := t0
		for _, d := range []int64{a, b, c} {
			if d < 0 || d > limit {
				return
			}
			at = at.Add(time.Duration(d) * time.Millisecond) // later signals come later
			next, _ := tl.Again(cfg, at)
			if next.HardDeadline.After(tl.HardDeadline) || next.GraceDeadline.After(tl.GraceDeadline) || next.StopAt.After(tl.StopAt) {
				t.Fatalf("a further signal extended %+v to %+v", tl, next)
			}
			check(next)
			tl = next
		}
	})
}

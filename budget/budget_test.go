package budget

import (
	"errors"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func cfg(grace, floor, drain time.Duration) Config {
	return Config{Grace: grace, Floor: floor, DrainDelay: drain}
}

func TestStartTable(t *testing.T) {
	c := cfg(20*time.Second, 250*time.Millisecond, 5*time.Second)
	tl := Start(c, t0, true)
	want := Timeline{SignalAt: t0, StopAt: at(5 * time.Second), GraceDeadline: at(20 * time.Second),
		HardDeadline: at(20*time.Second + 250*time.Millisecond), Signals: 1}
	if tl != want {
		t.Fatalf("Start = %+v, want %+v", tl, want)
	}
	if got := tl.Remaining(at(20 * time.Second)); got != 250*time.Millisecond {
		t.Errorf("Remaining at grace = %v, want 250ms", got)
	}
	if got := tl.Remaining(at(time.Minute)); got != 0 {
		t.Errorf("Remaining after hard = %v, want 0", got)
	}
}

func TestDefaultsFitDockerStopTimeout(t *testing.T) {
	c := Default()
	if c.Total() != 8250*time.Millisecond {
		t.Fatalf("default total = %v, want 8.25s", c.Total())
	}
	tl := Start(c, t0, true)
	if tl.StopAt != t0 {
		t.Errorf("no drain delay: stop signal at %v, want t0", tl.StopAt)
	}
}

func TestStartupAbortGetsOnlyTheFloor(t *testing.T) {
	c := cfg(20*time.Second, 300*time.Millisecond, 5*time.Second)
	tl := Start(c, t0, false)
	if tl.StopAt != t0 || tl.GraceDeadline != at(300*time.Millisecond) || tl.HardDeadline != at(300*time.Millisecond) {
		t.Fatalf("abort timeline = %+v", tl)
	}
}

func TestSecondSignalWhileQuiescingForwardsStopNow(t *testing.T) {
	c := cfg(20*time.Second, 250*time.Millisecond, 5*time.Second)
	tl, what := Start(c, t0, true).Again(c, at(time.Second))
	if what != ForwardStop {
		t.Fatalf("second signal while quiescing: %v, want ForwardStop", what)
	}
	if tl.StopAt != at(time.Second) {
		t.Errorf("StopAt = %v, want t0+1s", tl.StopAt)
	}
	if tl.HardDeadline != at(1250*time.Millisecond) {
		t.Errorf("HardDeadline = %v, want t1+floor", tl.HardDeadline)
	}
	if tl.GraceDeadline != tl.HardDeadline {
		t.Errorf("GraceDeadline = %v, must not lie after the hard deadline %v", tl.GraceDeadline, tl.HardDeadline)
	}
}

func TestSecondSignalWhileDrainingSendsDeadlineNow(t *testing.T) {
	c := cfg(20*time.Second, 250*time.Millisecond, 0)
	tl, what := Start(c, t0, true).Again(c, at(3*time.Second))
	if what != SendDeadline {
		t.Fatalf("second signal while draining: %v, want SendDeadline", what)
	}
	if tl.StopAt != t0 || tl.GraceDeadline != at(3*time.Second) || tl.HardDeadline != at(3250*time.Millisecond) {
		t.Errorf("timeline = %+v", tl)
	}
}

func TestSecondSignalNearTheEndNeverExtends(t *testing.T) {
	c := cfg(2*time.Second, time.Second, 0)
	orig := Start(c, t0, true)
	// t1+floor = 2.9s+1s lies after the hard deadline (3s): keep 3s.
	tl, _ := orig.Again(c, at(2900*time.Millisecond))
	if tl.HardDeadline != orig.HardDeadline {
		t.Errorf("HardDeadline moved from %v to %v", orig.HardDeadline, tl.HardDeadline)
	}
	if tl.GraceDeadline != orig.GraceDeadline {
		t.Errorf("GraceDeadline moved from %v to %v", orig.GraceDeadline, tl.GraceDeadline)
	}
}

func TestThirdSignalChangesNothing(t *testing.T) {
	c := cfg(10*time.Second, time.Second, 2*time.Second)
	tl, _ := Start(c, t0, true).Again(c, at(time.Second))
	tl3, what := tl.Again(c, at(1100*time.Millisecond))
	if what != SendDeadline {
		t.Errorf("third signal: %v, want SendDeadline", what)
	}
	tl3.Signals = tl.Signals
	if tl3 != tl {
		t.Errorf("third signal changed the timeline: %+v → %+v", tl, tl3)
	}
}

func TestAgainInvariants(t *testing.T) {
	c := cfg(5*time.Second, 500*time.Millisecond, 2*time.Second)
	for _, ready := range []bool{true, false} {
		for ms := 0; ms <= 7000; ms += 50 {
			orig := Start(c, t0, ready)
			tl, _ := orig.Again(c, at(time.Duration(ms)*time.Millisecond))
			if tl.HardDeadline.After(orig.HardDeadline) || tl.GraceDeadline.After(orig.GraceDeadline) || tl.StopAt.After(orig.StopAt) {
				t.Fatalf("ready=%v t1=%dms extended: %+v → %+v", ready, ms, orig, tl)
			}
			if tl.GraceDeadline.After(tl.HardDeadline) || tl.StopAt.After(tl.GraceDeadline) || tl.StopAt.Before(tl.SignalAt) {
				t.Fatalf("ready=%v t1=%dms out of order: %+v", ready, ms, tl)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		c  Config
		ok bool
	}{
		{Default(), true},
		{cfg(20*time.Second, 0, 5*time.Second), true},
		{cfg(0, 0, 0), true},
		{cfg(5*time.Second, 0, 5*time.Second), false},
		{cfg(5*time.Second, 0, 6*time.Second), false},
		{cfg(-time.Second, 0, 0), false},
		{cfg(time.Second, -1, 0), false},
	} {
		err := tc.c.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("Validate(%+v) = %v, want ok=%v", tc.c, err, tc.ok)
		}
	}
	if err := cfg(time.Second, 0, time.Second).Validate(); !errors.Is(err, ErrDrainNotShorter) {
		t.Errorf("drain = grace: %v, want ErrDrainNotShorter", err)
	}
}

func TestCleanupDeadline(t *testing.T) {
	if got := cfg(time.Second, 250*time.Millisecond, 0).CleanupDeadline(t0); got != at(250*time.Millisecond) {
		t.Errorf("CleanupDeadline = %v", got)
	}
}

func TestFitsAndRecommendation(t *testing.T) {
	for _, tc := range []struct {
		c         Config
		timeout   time.Duration
		allowance time.Duration
		fits      bool
		rec       int64
	}{
		{Default(), 10 * time.Second, DefaultAllowance, true, 10}, // 8.25+1 = 9.25 → 10
		{Default(), 9 * time.Second, DefaultAllowance, false, 10}, // docker -t 9
		{cfg(20*time.Second, 0, 5*time.Second), 30 * time.Second, DefaultAllowance, true, 21},
		{cfg(29*time.Second, time.Second, 0), 30 * time.Second, DefaultAllowance, false, 31},
		{cfg(2*time.Second, 250*time.Millisecond, 0), 2250 * time.Millisecond, 0, true, 3},
		{cfg(2*time.Second, 0, 0), 2 * time.Second, 0, true, 2},
		// A push of the final metrics comes after the hard deadline: 8.25+1+1.
		{withPush(Default(), time.Second), 10 * time.Second, DefaultAllowance, false, 11},
		{withPush(Default(), time.Second), 11 * time.Second, DefaultAllowance, true, 11},
	} {
		if got := tc.c.Fits(tc.timeout, tc.allowance); got != tc.fits {
			t.Errorf("%+v Fits(%v, %v) = %v", tc.c, tc.timeout, tc.allowance, got)
		}
		if got := tc.c.RecommendedSeconds(tc.allowance); got != tc.rec {
			t.Errorf("%+v RecommendedSeconds(%v) = %d, want %d", tc.c, tc.allowance, got, tc.rec)
		}
	}
}

func withPush(c Config, push time.Duration) Config {
	c.Push = push
	return c
}

func TestBreakdown(t *testing.T) {
	if got, want := Default().Breakdown(time.Second), "grace 8s + floor 250ms + allowance 1s"; got != want {
		t.Errorf("Breakdown = %q, want %q", got, want)
	}
	if got, want := withPush(Default(), 500*time.Millisecond).Breakdown(time.Second), "grace 8s + floor 250ms + push 500ms + allowance 1s"; got != want {
		t.Errorf("Breakdown = %q, want %q", got, want)
	}
	// The push moves no deadline.
	tl := Start(withPush(Default(), time.Second), t0, true)
	if tl.HardDeadline != at(DefaultGrace+DefaultFloor) {
		t.Errorf("hard deadline with a push = %v", tl.HardDeadline)
	}
}

// Package budget is the pure arithmetic of lfinit's shutdown deadlines.
//
// Given the configured grace, floor and drain delay and the instants at which
// shutdown signals arrive, it says when the stop signal, the deadline signal
// and the final SIGKILL are due. It reads no clock and makes no syscalls, so
// every rule of the shutdown's timeline is a unit test with made-up instants.
package budget

import (
	"errors"
	"fmt"
	"time"
)

// Defaults of the three durations (the default hard deadline, 8.25s, fits
// inside Docker's 10s stop timeout).
const (
	DefaultGrace      = 8 * time.Second
	DefaultFloor      = 250 * time.Millisecond
	DefaultDrainDelay = 0
)

// Config holds the three durations that make up a shutdown budget.
type Config struct {
	Grace      time.Duration // t0 → grace deadline: the child's time to stop
	Floor      time.Duration // grace deadline → hard deadline: emergency only
	DrainDelay time.Duration // t0 → stop signal: readiness already false
	// Push is the cap on pushing the final metrics (0: no push). It comes
	// after the hard deadline, once the tree is reaped, so it moves no
	// deadline; it only adds to what the stop timeout must cover.
	Push time.Duration
}

// Default returns the configuration lfinit runs with when no option is set.
func Default() Config {
	return Config{Grace: DefaultGrace, Floor: DefaultFloor, DrainDelay: DefaultDrainDelay}
}

// ErrDrainNotShorter is returned by Validate when the drain delay would eat
// the whole grace, leaving the child no time after its stop signal.
var ErrDrainNotShorter = errors.New("drain delay must be shorter than the grace")

// Validate reports a configuration that cannot make a sensible timeline.
func (c Config) Validate() error {
	switch {
	case c.Grace < 0 || c.Floor < 0 || c.DrainDelay < 0:
		return errors.New("durations must not be negative")
	case c.DrainDelay > 0 && c.DrainDelay >= c.Grace:
		return fmt.Errorf("%w (drain delay %v, grace %v)", ErrDrainNotShorter, c.DrainDelay, c.Grace)
	}
	return nil
}

// Total is the longest a shutdown can take: grace + floor.
func (c Config) Total() time.Duration { return c.Grace + c.Floor }

// CleanupDeadline is when leftovers of a child that exited on its own at
// exitedAt (no shutdown asked) get SIGKILL: one floor after their SIGTERM.
func (c Config) CleanupDeadline(exitedAt time.Time) time.Time {
	return exitedAt.Add(c.Floor)
}

// Timeline is the schedule of one shutdown. All instants are absolute, so a
// late wake-up never moves a deadline.
type Timeline struct {
	SignalAt      time.Time // t0: the first shutdown signal
	StopAt        time.Time // the stop signal is forwarded at this instant
	GraceDeadline time.Time // the deadline signal is due; the child is late
	HardDeadline  time.Time // SIGKILL to the whole tree, exit 1
	Signals       int       // shutdown signals received so far
}

// Start fixes the timeline of a shutdown whose first signal arrived at t0.
// A child that is not ready yet is aborted: no quiesce, only the floor.
func Start(c Config, t0 time.Time, ready bool) Timeline {
	if !ready {
		hard := t0.Add(c.Floor)
		return Timeline{SignalAt: t0, StopAt: t0, GraceDeadline: hard, HardDeadline: hard, Signals: 1}
	}
	return Timeline{
		SignalAt:      t0,
		StopAt:        t0.Add(c.DrainDelay),
		GraceDeadline: t0.Add(c.Grace),
		HardDeadline:  t0.Add(c.Grace + c.Floor),
		Signals:       1,
	}
}

// Hurry is what a further shutdown signal asks for, right now.
type Hurry int

// The answers of Again.
const (
	ForwardStop  Hurry = iota // the stop signal was not forwarded yet: forward it now
	SendDeadline              // send the deadline signal now
)

// Again applies a further shutdown signal received at t. The second one
// hurries: the stop signal is forwarded now if it was still due, otherwise
// the grace deadline becomes now; the hard deadline becomes min(hard,
// t+floor). Later ones only resend the deadline signal. Nothing is ever
// extended.
func (tl Timeline) Again(c Config, t time.Time) (Timeline, Hurry) {
	tl.Signals++
	if tl.Signals > 2 {
		return tl, SendDeadline
	}
	what := SendDeadline
	if t.Before(tl.StopAt) {
		tl.StopAt = t
		what = ForwardStop
	} else {
		tl.GraceDeadline = earliest(tl.GraceDeadline, t)
	}
	tl.HardDeadline = earliest(tl.HardDeadline, t.Add(c.Floor))
	tl.GraceDeadline = earliest(tl.GraceDeadline, tl.HardDeadline)
	tl.StopAt = earliest(tl.StopAt, tl.GraceDeadline)
	return tl, what
}

// Remaining is the time left before the hard deadline at now, never negative.
func (tl Timeline) Remaining(now time.Time) time.Duration {
	return max(tl.HardDeadline.Sub(now), 0)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// DefaultAllowance is the margin kept between lfinit's hard deadline and the
// orchestrator's stop timeout, for lfinit's own exit and the runtime's
// bookkeeping.
const DefaultAllowance = time.Second

// Needed is the stop timeout an orchestrator must grant: grace + floor +
// push + allowance.
func (c Config) Needed(allowance time.Duration) time.Duration {
	return c.Total() + c.Push + allowance
}

// Breakdown spells out Needed: "grace 8s + floor 250ms + allowance 1s", with
// the push when there is one.
func (c Config) Breakdown(allowance time.Duration) string {
	s := fmt.Sprintf("grace %v + floor %v", c.Grace, c.Floor)
	if c.Push > 0 {
		s += fmt.Sprintf(" + push %v", c.Push)
	}
	return s + fmt.Sprintf(" + allowance %v", allowance)
}

// Fits reports whether an orchestrator's stop timeout leaves room for the
// whole budget plus the allowance; past it the orchestrator's SIGKILL (137)
// would come before lfinit's own, honest exit.
func (c Config) Fits(stopTimeout, allowance time.Duration) bool {
	return stopTimeout >= c.Needed(allowance)
}

// RecommendedSeconds is the smallest whole number of seconds (for
// terminationGracePeriodSeconds or docker stop -t) that fits the budget.
func (c Config) RecommendedSeconds(allowance time.Duration) int64 {
	need := c.Needed(allowance)
	secs := int64(need / time.Second)
	if need%time.Second != 0 {
		secs++
	}
	return secs
}

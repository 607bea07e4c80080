package core

import "time"

// Watchdog is systemd's service watchdog (WatchdogSec=) as lfinit keeps
// it: armed when the child starts, fed by each WATCHDOG=1, missed when an
// interval passes without one (or at WATCHDOG=trigger). A miss makes
// lfinit not live; a later WATCHDOG=1 makes it live again. Pure: the loop
// gives it its instants.
type Watchdog struct {
	interval  time.Duration // 0: no watchdog
	last      time.Time     // the start, or the last WATCHDOG=1
	missedAt  time.Time     // zero while fed
	triggered bool          // the miss was WATCHDOG=trigger
}

// NewWatchdog is a watchdog of interval, armed at start; interval 0 is none.
func NewWatchdog(interval time.Duration, start time.Time) Watchdog {
	return Watchdog{interval: interval, last: start}
}

// On reports whether there is a watchdog at all.
func (w *Watchdog) On() bool { return w.interval > 0 }

// Fed records a WATCHDOG=1 at now and reports whether it ended a miss.
func (w *Watchdog) Fed(now time.Time) bool {
	if !w.On() {
		return false
	}
	ended := !w.missedAt.IsZero()
	w.last, w.missedAt, w.triggered = now, time.Time{}, false
	return ended
}

// Trigger records a WATCHDOG=trigger at now: a miss at once. It reports
// whether this began a miss.
func (w *Watchdog) Trigger(now time.Time) bool {
	if !w.On() || !w.missedAt.IsZero() {
		return false
	}
	w.missedAt, w.triggered = now, true
	return true
}

// Due checks the interval at now and reports whether a miss began.
func (w *Watchdog) Due(now time.Time) bool {
	if !w.On() || !w.missedAt.IsZero() || now.Before(w.Deadline()) {
		return false
	}
	w.missedAt = w.Deadline()
	return true
}

// Deadline is when the next WATCHDOG=1 is due.
func (w *Watchdog) Deadline() time.Time { return w.last.Add(w.interval) }

// MissedAt is when the watchdog was missed; zero while it is fed.
func (w *Watchdog) MissedAt() time.Time { return w.missedAt }

// Triggered reports whether the miss was the service's WATCHDOG=trigger.
func (w *Watchdog) Triggered() bool { return w.triggered }

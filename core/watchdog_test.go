package core

import (
	"testing"
	"time"
)

func TestWatchdogMissAndRecover(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := NewWatchdog(2*time.Second, t0)
	if w.Due(t0.Add(1999*time.Millisecond)) || !w.MissedAt().IsZero() {
		t.Fatal("missed before the interval")
	}
	if w.Fed(t0.Add(time.Second)) {
		t.Fatal("feeding a fed watchdog ended a miss")
	}
	if w.Deadline() != t0.Add(3*time.Second) {
		t.Fatalf("deadline %v", w.Deadline())
	}
	if !w.Due(t0.Add(3 * time.Second)) {
		t.Fatal("not missed at the deadline")
	}
	if w.MissedAt() != t0.Add(3*time.Second) || w.Triggered() {
		t.Fatalf("missed at %v, triggered %v", w.MissedAt(), w.Triggered())
	}
	if w.Due(t0.Add(10 * time.Second)) {
		t.Fatal("a miss began twice")
	}
	if !w.Fed(t0.Add(11*time.Second)) || !w.MissedAt().IsZero() {
		t.Fatal("WATCHDOG=1 did not end the miss")
	}
}

func TestWatchdogTrigger(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := NewWatchdog(time.Minute, t0)
	if !w.Trigger(t0.Add(time.Second)) || !w.Triggered() || w.MissedAt() != t0.Add(time.Second) {
		t.Fatalf("trigger: %+v", w)
	}
	if w.Trigger(t0.Add(2 * time.Second)) {
		t.Fatal("a second trigger began another miss")
	}
}

func TestWatchdogOff(t *testing.T) {
	w := NewWatchdog(0, time.Unix(1000, 0))
	if w.On() || w.Due(time.Unix(1e6, 0)) || w.Trigger(time.Unix(1e6, 0)) || w.Fed(time.Unix(1e6, 0)) {
		t.Fatal("a watchdog of interval 0 acted")
	}
}

package supervisor

import (
	"testing"
	"time"
)

// TestReapPace: a scan of d is followed by a rest of 9d, at most maxPause;
// a scan of a few microseconds makes no reap wait noticeably.
func TestReapPace(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var p reapPace
	if !p.Due(t0) {
		t.Fatal("the first reap must not wait")
	}
	p.Scanned(t0, t0.Add(100*time.Microsecond)) // thousands of live children
	end := t0.Add(100 * time.Microsecond)
	if p.Due(end.Add(899*time.Microsecond)) || !p.Due(end.Add(900*time.Microsecond)) {
		t.Errorf("after a 100 us scan the next is due at %v, want 900 us after it", p.Next().Sub(end))
	}
	p.Scanned(t0, t0.Add(time.Second)) // an absurdly long scan
	if got := p.Next().Sub(t0.Add(time.Second)); got != maxPause {
		t.Errorf("rest %v, want the cap %v", got, maxPause)
	}
	p.Scanned(t0, t0.Add(2*time.Microsecond)) // a small tree
	if !p.Due(t0.Add(20 * time.Microsecond)) {
		t.Error("a 2 us scan holds the next reap back more than 18 us")
	}
}

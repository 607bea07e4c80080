package supervisor

import "time"

// A full reap (wait4(-1) until nothing is left) ends with a wait4 that walks
// every live child of lfinit, a cost per child, holding the kernel's
// tasklist lock that every exiting process needs too. When orphans keep
// exiting one after another, a reap per SIGCHLD would rescan thousands of
// live children to find each one. reapPace holds the scans to about a tenth
// of the time: after a scan that took d, the next full reap waits until 9d
// later (the first SIGCHLD meanwhile looks only at the child, in constant
// time; later ones wake nothing until that reap), so the orphans are
// reaped in batches. A small tree scans in microseconds, so a normal run
// never waits.
type reapPace struct {
	next time.Time // no full reap before this
}

// paceFactor is how many times a scan's length the reaper rests after it.
const paceFactor = 9

// maxPause bounds the rest, whatever a scan took.
const maxPause = 20 * time.Millisecond

// Due reports whether a full reap may run at now.
func (p *reapPace) Due(now time.Time) bool { return !now.Before(p.next) }

// Next is the earliest instant the next full reap may run.
func (p *reapPace) Next() time.Time { return p.next }

// Scanned records a full reap that ran from start to end.
func (p *reapPace) Scanned(start, end time.Time) {
	p.next = end.Add(min(paceFactor*end.Sub(start), maxPause))
}

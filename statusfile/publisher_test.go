package statusfile

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// recorder is a fake write function that records what it is asked to write
// and can be made to block or fail.
type recorder struct {
	mu      sync.Mutex
	written []Status
	started chan Phase    // receives each phase as its write begins
	gate    chan struct{} // if not nil, every write waits for a receive on it
	results []error       // returned in order; nil once exhausted
}

func newRecorder() *recorder { return &recorder{started: make(chan Phase, 100)} }

func (r *recorder) write(_ string, s Status) error {
	r.started <- s.Phase
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.written = append(r.written, s)
	if len(r.results) == 0 {
		return nil
	}
	err := r.results[0]
	r.results = r.results[1:]
	return err
}

func (r *recorder) phases() []Phase {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ps []Phase
	for _, s := range r.written {
		ps = append(ps, s.Phase)
	}
	return ps
}

func waitStarted(t *testing.T, r *recorder, want Phase) {
	t.Helper()
	select {
	case got := <-r.started:
		if got != want {
			t.Fatalf("writer started %q, want %q", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("writer did not start writing %q", want)
	}
}

func TestPublisherNewestWins(t *testing.T) {
	r := newRecorder()
	r.gate = make(chan struct{})
	p := NewPublisher("unused", nil)
	p.write = r.write

	p.Publish(Status{Phase: Starting})
	waitStarted(t, r, Starting) // the writer is now busy with "starting"
	for _, ph := range []Phase{Ready, Quiescing, Draining, CleaningUp} {
		p.Publish(Status{Phase: ph, StillRunning: []string{"a[1]"}})
	}
	last := Status{Phase: Stopped, StillRunning: []string{"a[1]"}}
	p.Publish(last)
	last.StillRunning[0] = "mutated after Publish"
	close(r.gate)

	if !p.Close(5 * time.Second) {
		t.Fatal("Close did not see the last status written")
	}
	if got, want := r.phases(), []Phase{Starting, Stopped}; !reflect.DeepEqual(got, want) {
		t.Errorf("written %v, want %v: intermediate statuses should be skipped", got, want)
	}
	if got := r.written[len(r.written)-1].StillRunning[0]; got != "a[1]" {
		t.Errorf("the writer saw the caller's later mutation: %q", got)
	}
	if p.Writes() != 2 || p.Failures() != 0 {
		t.Errorf("Writes=%d Failures=%d, want 2, 0", p.Writes(), p.Failures())
	}
	// After Close the writer has exited (Close saw it), so nothing can be
	// written unless Publish starts another: any later write fails the
	// test, and the mailbox shows at once whether Publish took the status.
	p.write = func(string, Status) error {
		t.Error("Publish after Close was written")
		return nil
	}
	p.Publish(Status{Phase: Ready}) // after Close: ignored
	p.mu.Lock()
	pending := p.pending
	p.mu.Unlock()
	if pending != nil || p.Writes() != 2 {
		t.Errorf("Publish after Close was taken: pending %+v, Writes=%d", pending, p.Writes())
	}
}

// A writer stuck on a hung disk must not make Publish wait.
func TestPublisherNeverBlocks(t *testing.T) {
	r := newRecorder()
	r.gate = make(chan struct{})
	p := NewPublisher("unused", nil)
	p.write = r.write
	p.Publish(Status{Phase: Starting})
	waitStarted(t, r, Starting) // stuck from now on

	done := make(chan struct{})
	var published atomic.Int64
	go func() {
		defer close(done)
		for i := range 100000 {
			p.Publish(Status{Phase: Phases[i%len(Phases)], Pid: i})
			published.Add(1)
		}
		p.Publish(Status{Phase: Stopped, Pid: -1})
	}()
	// A Publish that waits on the stuck writer stops the count for good;
	// a slow machine only slows it. So wait as long as it moves.
	last, moved := int64(-1), time.Now()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-time.After(10 * time.Millisecond):
			if n := published.Load(); n != last {
				last, moved = n, time.Now()
			} else if time.Since(moved) > 5*time.Second {
				t.Fatalf("Publish blocked while the writer was stuck (%d published, then none for 5s)", n)
			}
		}
	}

	start := time.Now()
	if p.Close(50 * time.Millisecond) {
		t.Error("Close reported success while the writer is stuck")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v with a 50ms timeout", d)
	}

	// Once the disk recovers, the newest status is the one written.
	close(r.gate)
	if !p.Close(5 * time.Second) {
		t.Fatal("Close failed after the writer recovered")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.written); n != 2 || r.written[1].Pid != -1 {
		t.Errorf("written %d statuses, last %+v; want 2, the last Pid -1", n, r.written[n-1])
	}
}

func TestPublisherOnErrorOncePerKind(t *testing.T) {
	e := func(errno syscall.Errno) error {
		return &fs.PathError{Op: "open", Path: "/x", Err: errno}
	}
	r := newRecorder()
	r.results = []error{
		e(syscall.EROFS), e(syscall.EACCES), // read-only, once
		e(syscall.ENOSPC),  // no-space
		e(syscall.EROFS),   // read-only again, not reported
		nil,                // success resets
		e(syscall.EROFS),   // reported again
		e(syscall.ENOENT),  // missing
		errors.New("boom"), // other
		errors.New("bang"), // other again, not reported
	}
	var mu sync.Mutex
	var kinds []string
	p := NewPublisher("unused", func(kind string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			t.Error("onError called with a nil error")
		}
		kinds = append(kinds, kind)
	})
	p.write = r.write
	n := len(r.results)
	for i := range n {
		// One at a time, so none is skipped by the mailbox.
		p.Publish(Status{Phase: Phases[i%len(Phases)]})
		waitStarted(t, r, Phases[i%len(Phases)])
		for deadline := time.Now().Add(5 * time.Second); p.Writes()+p.Failures() < int64(i+1); {
			if time.Now().After(deadline) {
				t.Fatal("write did not complete")
			}
			time.Sleep(time.Millisecond)
		}
	}
	if p.Close(5 * time.Second) {
		t.Error("Close reported success although the last write failed")
	}
	want := []string{KindReadOnly, KindNoSpace, KindReadOnly, KindMissing, KindOther}
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("onError kinds %q, want %q", kinds, want)
	}
	if p.Writes() != 1 || p.Failures() != int64(n-1) {
		t.Errorf("Writes=%d Failures=%d, want 1, %d", p.Writes(), p.Failures(), n-1)
	}
}

func TestPublisherCloseUnused(t *testing.T) {
	p := NewPublisher("unused", nil)
	if !p.Close(0) {
		t.Error("Close of an unused Publisher reported failure")
	}
}

func TestPublisherWritesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.json")
	p := NewPublisher(path, func(kind string, err error) { t.Errorf("onError(%s, %v)", kind, err) })
	for i, ph := range Phases {
		p.Publish(Status{Version: Version, Phase: ph, Pid: i})
	}
	if !p.Close(5 * time.Second) {
		t.Fatal("Close did not see the last status written")
	}
	s, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Phase != Stopped || s.Pid != len(Phases)-1 {
		t.Errorf("file has %+v, want the last status published", s)
	}
	if p.Writes() < 1 || p.Failures() != 0 {
		t.Errorf("Writes=%d Failures=%d", p.Writes(), p.Failures())
	}
}

func TestPublisherRealFailure(t *testing.T) {
	var kinds []string
	var mu sync.Mutex
	p := NewPublisher(filepath.Join(t.TempDir(), "no", "such", "dir", "status.json"), func(kind string, err error) {
		mu.Lock()
		kinds = append(kinds, kind)
		mu.Unlock()
	})
	p.Publish(Status{Phase: Starting})
	if p.Close(5 * time.Second) {
		t.Error("Close reported success for an unwritable path")
	}
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(kinds, []string{KindMissing}) {
		t.Errorf("kinds = %q, want [missing]", kinds)
	}
}

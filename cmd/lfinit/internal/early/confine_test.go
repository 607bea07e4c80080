package early

import (
	"runtime"
	"syscall"
	"testing"
)

// cpus is a cpuSet of the given CPUs.
func cpus(list ...int) cpuSet {
	var s cpuSet
	for _, c := range list {
		s.set(c)
	}
	return s
}

func TestTripsCPUIsTheHighestOtherCPU(t *testing.T) {
	for _, c := range []struct {
		name    string
		in      cpuSet
		current int
		want    cpuSet
		ok      bool
	}{
		{"none", cpus(), 0, cpus(), false},
		{"only the current", cpus(3), 3, cpus(), false},
		{"one other", cpus(3), 0, cpus(3), true},
		{"two, on the first", cpus(0, 1), 0, cpus(1), true},
		{"two, on the second", cpus(0, 1), 1, cpus(0), true},
		{"sparse", cpus(2, 5, 9), 5, cpus(9), true},
		{"beyond a word", cpus(0, 63, 64, 1023), 1023, cpus(64), true},
	} {
		got, ok := tripsCPU(c.in, c.current)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%s: tripsCPU = %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestAtoi(t *testing.T) {
	for in, want := range map[string]int{"1": 1, "4242": 4242, "": -1, "12a": -1, "-3": -1, "99999999999": -1} {
		if got := atoi(in); got != want {
			t.Errorf("atoi(%q) = %d, want %d", in, got, want)
		}
	}
}

// count is how many CPUs s has.
func count(s cpuSet) int {
	n := 0
	for cpu := range len(s) * wordBits {
		if s.has(cpu) {
			n++
		}
	}
	return n
}

// within reports whether every CPU of s is one of all's.
func within(s, all cpuSet) bool {
	for i := range s {
		if s[i]&^all[i] != 0 {
			return false
		}
	}
	return true
}

// masks is every thread's CPU mask.
func masks(t *testing.T) map[int]cpuSet {
	t.Helper()
	out := map[int]cpuSet{}
	for _, tid := range threads() {
		if m, ok := affinity(tid); ok {
			out[tid] = m
		}
	}
	if len(out) == 0 {
		t.Fatal("no thread's mask could be read")
	}
	return out
}

// TestConfineThenRelease confines this test's threads as early's init
// does, checks where each one is, and that release gives every one,
// including a thread started while confined, the mask it had.
func TestConfineThenRelease(t *testing.T) {
	<-Done
	saved, ok := affinity(0)
	if !ok {
		t.Fatal("cannot read this thread's mask")
	}
	if n := count(saved); n < 2 {
		t.Skipf("%d CPU: nothing to confine", n)
	}
	for tid, m := range masks(t) {
		if m != saved {
			t.Fatalf("after early's init, thread %d has mask %v, not the process's %v", tid, m, saved)
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := confine()
	if !c.on {
		t.Fatal("confine did nothing on a machine with two CPUs")
	}
	self := syscall.Gettid()
	var trips cpuSet
	for tid, m := range masks(t) {
		switch {
		case tid == self && m != saved:
			t.Errorf("confined: the caller's thread has %v, want its own %v", m, saved)
		case tid == self:
		case count(m) != 1 || !within(m, saved):
			t.Errorf("confined: thread %d has %v, want one of %v", tid, m, saved)
		case trips != cpuSet{} && m != trips:
			t.Errorf("confined: thread %d has %v, another %v", tid, m, trips)
		default:
			trips = m
		}
	}
	// Threads started now inherit their creator's confined mask: each
	// goroutine below holds a thread of its own until the test ends.
	before := masks(t)
	started, end := make(chan struct{}), make(chan struct{})
	defer close(end)
	for range 8 {
		go func() {
			runtime.LockOSThread() // the thread exits with the goroutine
			started <- struct{}{}
			<-end
		}()
		<-started
	}
	news := 0
	for tid, m := range masks(t) {
		if _, old := before[tid]; !old {
			news++
			if m == saved {
				t.Errorf("thread %d, started while confined, has the saved mask already", tid)
			}
		}
	}
	if news == 0 {
		t.Fatal("no thread was started while confined")
	}
	c.release()
	for tid, m := range masks(t) {
		if m != saved {
			t.Errorf("released: thread %d has %v, want %v", tid, m, saved)
		}
	}
}

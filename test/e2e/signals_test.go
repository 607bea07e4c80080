package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/forward"
)

// notRelayed are the signals the README lists as not relayed, with why;
// every other signal from 1 to 64 but KILL and STOP must reach the child.
var notRelayed = map[int]string{
	13: "SIGPIPE: lfinit's own output",
	17: "SIGCHLD: lfinit reaps",
	23: "SIGURG: the Go runtime's preemption",
	27: "SIGPROF: the Go runtime's profiler",
	32: "the Go runtime's",
	33: "the Go runtime's",
	34: "the Go runtime's",
}

// TestEverySignal1To64 sends every signal a process can send (but KILL and
// STOP) to lfinit, as PID 1 and as a subreaper: lfinit stays alive, and
// each relayable one, the synchronous faults included, reaches the child.
func TestEverySignal1To64(t *testing.T) {
	long(t)
	t.Parallel()
	for _, pid1 := range []bool{true, false} {
		t.Run(fmt.Sprintf("pid1=%v", pid1), func(t *testing.T) {
			t.Parallel()
			r := start(t, pid1, []string{"--shutdown-signals", "PWR", "--grace", "2s", "HELPER", "-record", "DIR/rec", "-die-on", "", "-ready-file", "DIR/ready"})
			r.waitFile("ready")
			var want []int
			for n := 1; n <= 64; n++ {
				if n == 9 || n == 19 || n == int(syscall.SIGPWR) {
					continue
				}
				r.signal(syscall.Signal(n))
				if _, skip := notRelayed[n]; skip {
					continue
				}
				want = append(want, n)
				recorded(t, r.path("rec"), "signal", n)
			}
			// No wait for a crash: the signals not relayed (13 to 34) were
			// each sent before a relayed one with a higher number (35 to
			// 64), which lfinit relayed, and the exit code below is the
			// forced stop's 1 only if lfinit lived to run the whole
			// shutdown: one that died of a signal exits 128+N, a Go crash 2.
			select {
			case <-r.done:
				t.Fatalf("lfinit exited (%d) on one of the signals:\n%s", r.code, r.stderr.String())
			default:
			}
			r.signal(syscall.SIGPWR)
			if got := r.wait(15 * time.Second); got != 1 {
				t.Fatalf("exit %d, want 1 (the child ignores its stop signal; 128+N or 2: lfinit died)\n%s", got, r.stderr.String())
			}
			got := signals(readRecord(t, r.path("rec")), "signal")
			// Then PWR as the stop signal (and as the deadline signal, which
			// a loaded machine may not let the child record before its
			// SIGKILL a floor later).
			want = append(want, int(syscall.SIGPWR))
			if len(got) > len(want) && got[len(want)] == int(syscall.SIGPWR) {
				got = got[:len(want)]
			}
			if !slices.Equal(got, want) {
				t.Fatalf("child received\n%v\nwant\n%v", got, want)
			}
			if strings.Contains(r.stderr.String(), "goroutine ") {
				t.Fatalf("lfinit printed a stack dump:\n%s", r.stderr.String())
			}
		})
	}
}

// TestNotRelayedMatchesTheTable keeps the e2e list above and forward.Table
// in step.
func TestNotRelayedMatchesTheTable(t *testing.T) {
	for n := 1; n <= 64; n++ {
		_, listed := notRelayed[n]
		if n == 9 || n == 19 {
			listed = true
		}
		if forward.IsRelayed(syscall.Signal(n)) == listed {
			t.Errorf("signal %s: relayed=%v, but the e2e list says %v", strconv.Itoa(n), forward.IsRelayed(syscall.Signal(n)), !listed)
		}
	}
}

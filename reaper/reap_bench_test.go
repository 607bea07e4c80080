package reaper

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkReapNothing is a reap pass with no child at all: one wait4
// answering ECHILD.
func BenchmarkReapNothing(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if exits, empty := Reap(false, nil); !empty || len(exits) > 0 {
			b.Fatal("Reap says children are left")
		}
	}
}

// BenchmarkReapScan is a reap pass that finds nothing to reap among n live
// children: wait4(-1, WNOHANG) walks the whole list of children in the
// kernel, so with thousands of orphans every empty pass costs that much.
// This is the cost that dominates a mass exit of orphans, not lfinit's code.
func BenchmarkReapScan(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run("children="+itoa(n), func(b *testing.B) {
			kids := sleepers(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if exits, empty := Reap(false, nil); len(exits) > 0 {
					b.Fatal("a sleeper exited")
				} else if empty {
					b.Fatal("Reap says no child is left")
				}
			}
			b.StopTimer()
			for _, c := range kids {
				c.Process.Kill()
				c.Wait()
			}
		})
	}
}

// BenchmarkReapZombies reaps batches of exited children; reap-ns/zombie is
// the time inside Reap only (making the zombies is not counted, so ns/op
// and the allocations are mostly fork and exec).
func BenchmarkReapZombies(b *testing.B) {
	const batch = 16
	var inReap time.Duration
	reaped := 0
	for b.Loop() {
		zombies(b, batch)
		t := time.Now()
		exits, _ := Reap(false, nil)
		reaped += len(exits)
		inReap += time.Since(t)
	}
	if reaped > 0 {
		b.ReportMetric(float64(inReap.Nanoseconds())/float64(reaped), "reap-ns/zombie")
	}
}

// sleepers starts n children that sleep until killed.
func sleepers(b *testing.B, n int) []*exec.Cmd {
	b.Helper()
	var kids []*exec.Cmd
	for range n {
		c := exec.Command("sleep", "600")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		kids = append(kids, c)
	}
	return kids
}

// zombies starts n children that exit at once, and returns when all of
// them have exited but none is reaped (waitid with WNOWAIT).
func zombies(b *testing.B, n int) {
	b.Helper()
	path, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true(1) to start")
	}
	for range n {
		pid, err := syscall.ForkExec(path, []string{"true"}, &syscall.ProcAttr{})
		if err != nil {
			b.Fatal(err)
		}
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				break
			}
		}
	}
}

func itoa(n int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}

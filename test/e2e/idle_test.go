package e2e

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// binaryRss is how many kB of its own binary process pid has in memory
// (rss) of how many it maps (size): the Rss and Size of its mappings of
// /proc/PID/exe, whatever file system holds it.
func binaryRss(pid int) (rss, size int, err error) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return 0, 0, err
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	inExe := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		switch {
		case len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":"):
			inExe = len(fs) >= 6 && fs[5] == exe
		case inExe && len(fs) >= 2 && fs[0] == "Rss:":
			n, _ := strconv.Atoi(fs[1])
			rss += n
		case inExe && len(fs) >= 2 && fs[0] == "Size:":
			n, _ := strconv.Atoi(fs[1])
			size += n
		}
	}
	return rss, size, sc.Err()
}

// TestIdleGivesItsStartPagesBack: once the child has run a moment, lfinit
// keeps less than half of its binary's mappings in memory (its start-up
// faults in most of them), and a stop after that still takes its whole path: forward, reap
// and the final summary.
func TestIdleGivesItsStartPagesBack(t *testing.T) {
	t.Parallel()
	r := startWith(t, true, []string{"HELPER", "-ready-file", "DIR/ready"}, defaultLevel)
	r.waitFile("ready")
	ready := time.Now()
	var rss, size int
	waitFor(t, 10*time.Second, "lfinit to keep less than half of its binary in memory", func() bool {
		var err error
		rss, size, err = binaryRss(r.lfinitPid())
		return err == nil && rss > 0 && rss < size/2
	})
	t.Logf("%d of the binary's %d kB in memory once idle (%v after ready)", rss, size, time.Since(ready).Round(time.Millisecond))
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d, want 143", got)
	}
	if lines := logLines(r); len(lines) != 1 || !strings.Contains(lines[0], "outcome=graceful") {
		t.Errorf("want only the graceful summary:\n%s", r.stderr.String())
	}
}

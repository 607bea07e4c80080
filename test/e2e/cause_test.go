package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/memcg"
	"github.com/light-fabric/lfinit/statusfile"
)

// The final records say why the child ended, beyond its exit status, and
// what it cost: the status file, the exit line and the termination message.

// TestCauseOfAnOOMKill: lfinit as PID 1 in a memory cgroup of the test's
// own with a 64 MiB limit; its child (bash building a 300 MiB string) is
// killed by the kernel's OOM killer, which lfinit survives. The exit code
// stays the child's 137, and every record says oom-kill with the limit and
// the peak (cgroup v1, as these machines mount it).
func TestCauseOfAnOOMKill(t *testing.T) {
	long(t)
	t.Parallel()
	needRoot(t)
	cg := memoryCgroup(t, 64<<20)
	r := startWith(t, true, []string{"--status-file", "DIR/status.json", "--termination-log", "DIR/termlog", "--",
		"/bin/bash", "-c", `x=$(head -c 300M /dev/zero | tr '\0' a); echo survived ${#x}`},
		nil, "/bin/sh", "-c", `echo 0 > "$0/cgroup.procs" && exec "$@"`, cg)
	if got := r.wait(time.Minute); got != 137 {
		t.Fatalf("exit %d, want the child's 137 (killed)", got)
	}
	s := readStatus(t, r.path("status.json"))
	if s.Cause == nil || *s.Cause != statusfile.CauseOOMKill {
		t.Fatalf("cause %v, want oom-kill", s.Cause)
	}
	if s.MemoryLimitBytes == nil || *s.MemoryLimitBytes != 64<<20 || s.MemoryPeakBytes == nil || *s.MemoryPeakBytes < 60<<20 {
		t.Errorf("memory limit %v and peak %v, want 64 MiB and near it", s.MemoryLimitBytes, s.MemoryPeakBytes)
	}
	if s.ChildPeakRSSBytes == nil || *s.ChildPeakRSSBytes < 32<<20 {
		t.Errorf("child peak RSS %v, want most of the 64 MiB", s.ChildPeakRSSBytes)
	}
	if log := r.stderr.String(); !strings.Contains(log, "cause=oom-kill") || !strings.Contains(log, "level=WARN msg=exit") {
		t.Errorf("the exit line is not a WARN naming the OOM kill:\n%s", log)
	}
	msg, _ := os.ReadFile(r.path("termlog"))
	if !strings.Contains(string(msg), "killed by the kernel's OOM killer: ") || !strings.Contains(string(msg), "of a 64MiB limit") {
		t.Errorf("termination message does not name the OOM kill: %q", msg)
	}
}

// TestCauseOfAKillFromOutside: the child is SIGKILLed by another process
// (here the test); the OOM counter did not grow, so lfinit says so.
func TestCauseOfAKillFromOutside(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--status-file", "DIR/status.json", "HELPER", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	child := childOf(t, r)
	if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if got := r.wait(10 * time.Second); got != 137 {
		t.Fatalf("exit %d, want the child's 137", got)
	}
	// Unknown, not a guess, where this machine shows no OOM counter.
	want := statusfile.CauseUnknown
	if g, err := memcg.Find(); err == nil && g.Read().HasOOM {
		want = statusfile.CauseKilledFromOutside
	}
	if s := readStatus(t, r.path("status.json")); s.Cause == nil || *s.Cause != want {
		t.Fatalf("cause %v, want %s", s.Cause, want)
	}
}

// TestCauseOfTheDeadlineAndWhatItCost: a child that burns CPU, then
// ignores TERM, is killed at the hard deadline: cause deadline, and its
// CPU time is in the records.
func TestCauseOfTheDeadlineAndWhatItCost(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--status-file", "DIR/status.json", "--grace=200ms", "--floor=100ms", "--",
		"/bin/bash", "-c", `trap '' TERM; for ((i = 0; i < 100000; i++)); do :; done; touch "$0/ready"; sleep 1000`, "DIR")
	r.waitFile("ready")
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 1 {
		t.Fatalf("exit %d, want 1", got)
	}
	s := readStatus(t, r.path("status.json"))
	if s.Cause == nil || *s.Cause != statusfile.CauseDeadline {
		t.Fatalf("cause %v, want deadline", s.Cause)
	}
	if s.ChildUserSeconds == nil || *s.ChildUserSeconds <= 0 || s.TreeCPUSeconds == nil || *s.TreeCPUSeconds < *s.ChildUserSeconds {
		t.Errorf("child user CPU %v, tree CPU %v: want the loop's CPU, the tree's at least as much", s.ChildUserSeconds, s.TreeCPUSeconds)
	}
	if log := r.stderr.String(); !strings.Contains(log, "cause=deadline") || !strings.Contains(log, "child_user_seconds=") {
		t.Errorf("the exit line lacks the cause or the cost:\n%s", log)
	}
}

// TestCauseOfAnExit: a child that exits by itself.
func TestCauseOfAnExit(t *testing.T) {
	t.Parallel()
	r := startSubreaper(t, "--status-file", "DIR/status.json", "HELPER", "-exit", "3")
	if got := r.wait(10 * time.Second); got != 3 {
		t.Fatalf("exit %d, want 3", got)
	}
	if s := readStatus(t, r.path("status.json")); s.Cause == nil || *s.Cause != statusfile.CauseExited || s.MemoryLimitBytes != nil {
		t.Fatalf("cause %v (memory read: %v), want exited, and no memory read", s.Cause, s.MemoryLimitBytes != nil)
	}
}

// childOf is the pid, as the test sees it, of lfinit's one child.
func childOf(t *testing.T, r *run) int {
	t.Helper()
	kids := childrenOf(r.lfinitPid())
	if len(kids) != 1 {
		t.Fatalf("lfinit has children %v, want one", kids)
	}
	return kids[0]
}

// memoryCgroup makes a cgroup v1 memory group limited to limit bytes
// (swap included), removed when the test ends; it skips where the v1
// memory controller is not mounted.
func memoryCgroup(t *testing.T, limit int) string {
	t.Helper()
	root := "/sys/fs/cgroup/memory"
	if _, err := os.Stat(filepath.Join(root, "memory.oom_control")); err != nil {
		t.Skipf("no cgroup v1 memory controller at %s: %v", root, err)
	}
	dir := filepath.Join(root, fmt.Sprintf("lfinit-e2e-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Empty once every process of the run is reaped (the harness's
		// cleanup ran first); rmdir retries while the kernel lets go.
		for deadline := time.Now().Add(10 * time.Second); os.Remove(dir) != nil && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
	})
	for _, f := range []string{"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"} {
		err := os.WriteFile(filepath.Join(dir, f), []byte(fmt.Sprint(limit)), 0)
		if err != nil && f == "memory.limit_in_bytes" {
			t.Fatal(err)
		}
	}
	return dir
}

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// deny is the wrapper (testdata/deny.c) that runs lfinit with the system
// calls nrs failing with errno.
func deny(t *testing.T, errno syscall.Errno, nrs ...int) []string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "deny")
	if out, err := exec.Command("gcc", "-O2", "-o", bin, "testdata/deny.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc deny.c (scripts/install-deps installs gcc): %v\n%s", err, out)
	}
	list := make([]string, len(nrs))
	for i, nr := range nrs {
		list[i] = strconv.Itoa(nr)
	}
	return []string{bin, strconv.Itoa(int(errno)), strings.Join(list, ",")}
}

// pidfdCalls are pidfd_open and pidfd_send_signal.
var pidfdCalls = []int{unix.SYS_PIDFD_OPEN, unix.SYS_PIDFD_SEND_SIGNAL}

// leftoversScript starts two processes that ignore TERM, each in a session
// of its own (out of the child's group), writes their pids, and exits 0.
const leftoversScript = `: > "$1"
for i in 1 2; do
	setsid -f sh -c 'trap "" TERM; echo $$ >> "$1"; exec sleep 1000 </dev/null >/dev/null 2>&1' sh "$1"
done
while [ "$(wc -l < "$1")" -lt 2 ]; do sleep 0.01; done
`

// TestLeftoversUnderASeccompProfileWithoutPidfd: where a seccomp filter
// answers the pidfd calls with EPERM (older container profiles) or ENOSYS,
// lfinit (not PID 1) still TERMs what the child left behind, SIGKILLs it
// one floor later, counts both, and leaves nothing running.
func TestLeftoversUnderASeccompProfileWithoutPidfd(t *testing.T) {
	t.Parallel()
	for _, errno := range []syscall.Errno{syscall.EPERM, syscall.ENOSYS} {
		r := startWith(t, false, []string{"--floor=300ms", "--status-file=DIR/status.json", "--", "sh", "-c", leftoversScript, "sh", "DIR/pids"},
			nil, deny(t, errno, pidfdCalls...)...)
		if code := r.wait(10 * time.Second); code != 0 {
			t.Fatalf("%v: exit %d, want the child's 0", errno, code)
		}
		pids := readPids(t, r.path("pids"))
		for _, pid := range pids {
			if alive(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("%v: leftover %d still runs after lfinit exited", errno, pid)
			}
		}
		s := readStatus(t, r.path("status.json"))
		log := r.stderr.String()
		if s.Killed != 2 || s.NotSignalled != 0 || !strings.Contains(log, "leftovers=2") {
			t.Errorf("%v: killed=%d not_signalled=%d (want 2, 0), log:\n%s", errno, s.Killed, s.NotSignalled, log)
		}
	}
}

// TestDeadlineUnderASeccompProfileWithoutPidfd: the hard deadline holds
// with the pidfd calls denied, for the child and a daemon of its own.
func TestDeadlineUnderASeccompProfileWithoutPidfd(t *testing.T) {
	t.Parallel()
	r := startWith(t, false, []string{"--grace=500ms", "--floor=250ms", "--status-file=DIR/status.json",
		"--", "HELPER", "-die-on", "", "-daemon", "DIR/daemon.pid", "-daemon-ignore-term", "-ready-file", "DIR/ready"},
		nil, deny(t, syscall.EPERM, pidfdCalls...)...)
	r.waitFile("ready")
	daemon := readPid(t, r.path("daemon.pid"))
	sent := time.Now()
	r.signal(syscall.SIGTERM)
	if code := r.wait(10 * time.Second); code != 1 {
		t.Fatalf("exit %d after a deadline stop, want 1", code)
	}
	between(t, "deadline stop", time.Since(sent), 700*time.Millisecond, 2*time.Second)
	if alive(daemon) {
		syscall.Kill(daemon, syscall.SIGKILL)
		t.Errorf("the daemon %d outlived lfinit", daemon)
	}
	if s := readStatus(t, r.path("status.json")); s.Killed != 2 || s.NotSignalled != 0 {
		t.Errorf("killed=%d not_signalled=%d, want 2, 0", s.Killed, s.NotSignalled)
	}
}

func readPids(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %q is not a pid", path, f)
		}
		pids = append(pids, n)
	}
	return pids
}

// TestDeniedWaitIsRefusedAtStart: without wait4 or waitid lfinit could
// reap nothing, so it refuses to start, exit 2, naming the call.
func TestDeniedWaitIsRefusedAtStart(t *testing.T) {
	t.Parallel()
	for _, nr := range []int{unix.SYS_WAIT4, unix.SYS_WAITID} {
		r := startWith(t, false, []string{"--", "sh", "-c", "touch DIR/ran"}, nil, deny(t, syscall.EPERM, nr)...)
		code := r.wait(10 * time.Second)
		line := strings.TrimSpace(r.stderr.String())
		if code != 2 || strings.Count(line, "\n") != 0 || !strings.Contains(line, "system call fails") || !strings.Contains(line, "seccomp") {
			t.Errorf("syscall %d denied: exit %d, stderr %q; want exit 2 and one line naming the call", nr, code, line)
		}
		if _, err := os.Stat(r.path("ran")); err == nil {
			t.Errorf("syscall %d denied: the child ran", nr)
		}
	}
}

// TestDeniedAffinityCallsChangeNothing: where a profile denies the calls
// lfinit's start confines its threads with, it starts as usual and the
// child gets every CPU lfinit has.
func TestDeniedAffinityCallsChangeNothing(t *testing.T) {
	t.Parallel()
	for _, nr := range []int{unix.SYS_SCHED_SETAFFINITY, unix.SYS_SCHED_GETAFFINITY, unix.SYS_GETCPU} {
		r := startWith(t, false, []string{"--", "sh", "-c", "grep Cpus_allowed_list /proc/self/status > DIR/cpus"}, nil, deny(t, syscall.EPERM, nr)...)
		if code := r.wait(10 * time.Second); code != 0 {
			t.Fatalf("syscall %d denied: exit %d, want 0\n%s", nr, code, r.stderr.String())
		}
		own, err := os.ReadFile("/proc/self/status")
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(r.path("cpus"))
		if err != nil {
			t.Fatal(err)
		}
		if want := statusField(string(own), "Cpus_allowed_list"); statusField(string(got), "Cpus_allowed_list") != want {
			t.Errorf("syscall %d denied: the child has %q, want CPUs %s", nr, got, want)
		}
	}
}

// TestUnsignalledLeftoversAreReported: where no signal can be sent at all
// (kill denied too), lfinit does not claim the leftovers killed: each is
// warned of with its pid and counted in not_signalled, and the final
// line is a WARN.
func TestUnsignalledLeftoversAreReported(t *testing.T) {
	t.Parallel()
	r := startWith(t, false, []string{"--floor=200ms", "--status-file=DIR/status.json", "--", "sh", "-c", leftoversScript, "sh", "DIR/pids"},
		[]string{"LFINIT_LOG_LEVEL=info"}, deny(t, syscall.EPERM, append(pidfdCalls, unix.SYS_KILL)...)...)
	code := r.wait(10 * time.Second)
	pids := readPids(t, r.path("pids"))
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL) // the test's own cleanup: lfinit could not
	}
	log := r.stderr.String()
	s := readStatus(t, r.path("status.json"))
	if code != 0 || s.Killed != 0 || s.NotSignalled != 2 {
		t.Errorf("exit %d killed=%d not_signalled=%d, want 0, 0, 2\n%s", code, s.Killed, s.NotSignalled, log)
	}
	for _, pid := range pids {
		if !strings.Contains(log, "target_pid="+strconv.Itoa(pid)) {
			t.Errorf("no warning names leftover %d:\n%s", pid, log)
		}
	}
	if !strings.Contains(log, "level=WARN msg=exit") || !strings.Contains(log, "not_signalled=2") {
		t.Errorf("the final line does not warn of the 2 processes not signalled:\n%s", log)
	}
}

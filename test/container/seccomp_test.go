package container

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Under a container seccomp profile that lacks the pidfd calls, lfinit as
// the entrypoint behind `podman run --init` (podman's catatonit is PID 1,
// so lfinit is not, and walks its own tree): what the child left behind in
// sessions of its own is still TERMed, SIGKILLed, counted and reaped
// before lfinit exits, and the hard deadline holds.

// deniedPidfd is a profile's answer to the pidfd calls.
type deniedPidfd struct {
	name  string
	errno unix.Errno
}

var pidfdDenials = []deniedPidfd{{"EPERM", unix.EPERM}, {"ENOSYS", unix.ENOSYS}}

// defaultSeccomp is the profile podman applies when told none: the
// override in /etc/containers when there is one, else the packaged one.
func defaultSeccomp(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/etc/containers/seccomp.json", "/usr/share/containers/seccomp.json"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no podman seccomp profile (/usr/share/containers/seccomp.json, from golang-github-containers-common)")
	return ""
}

// withoutPidfd writes, in a temp dir, podman's default profile with
// pidfd_open and pidfd_send_signal removed from what it allows, and its
// default action (an errno for every syscall not listed) answering
// d.errno: EPERM as the container profiles older than the calls do, ENOSYS
// as newer ones do.
func withoutPidfd(t *testing.T, d deniedPidfd) string {
	t.Helper()
	b, err := os.ReadFile(defaultSeccomp(t))
	if err != nil {
		t.Fatal(err)
	}
	var profile map[string]any
	if err := json.Unmarshal(b, &profile); err != nil {
		t.Fatalf("podman's seccomp profile: %v", err)
	}
	if profile["defaultAction"] != "SCMP_ACT_ERRNO" {
		t.Fatalf("podman's seccomp profile: defaultAction %v, want SCMP_ACT_ERRNO", profile["defaultAction"])
	}
	profile["defaultErrnoRet"] = int(d.errno)
	if _, ok := profile["defaultErrno"]; ok {
		profile["defaultErrno"] = d.name
	}
	rules, _ := profile["syscalls"].([]any)
	removed := 0
	var kept []any
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		names, _ := rule["names"].([]any)
		var left []any
		for _, n := range names {
			if n == "pidfd_open" || n == "pidfd_send_signal" {
				removed++
				continue
			}
			left = append(left, n)
		}
		if len(left) > 0 {
			rule["names"] = left
			kept = append(kept, rule)
		}
	}
	if removed == 0 {
		t.Fatalf("podman's seccomp profile does not list pidfd_open or pidfd_send_signal")
	}
	profile["syscalls"] = kept
	out, err := json.MarshalIndent(profile, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "seccomp-without-pidfd-"+d.name+".json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// pidfdAnswer is the errno pidfd_open fails with in a container run with
// opts (0: it works), so a profile that does not apply cannot pass for one
// that does.
func pidfdAnswer(t *testing.T, opts ...string) int {
	t.Helper()
	args := append([]string{"run", "--rm", "--network", "none", "--entrypoint", "/bin/pidfd-errno"}, opts...)
	out := podman(t, append(args, baseImage)...)
	n, err := strconv.Atoi(out)
	if err != nil {
		t.Fatalf("pidfd-errno printed %q", out)
	}
	return n
}

func TestPidfdDeniedSeccompProfileApplies(t *testing.T) {
	needPodman(t)
	if got := pidfdAnswer(t); got != 0 {
		t.Errorf("under podman's default profile pidfd_open failed with errno %d, want it to work", got)
	}
	for _, d := range pidfdDenials {
		if got := pidfdAnswer(t, "--security-opt", "seccomp="+withoutPidfd(t, d)); got != int(d.errno) {
			t.Errorf("under the profile without the pidfd calls (%s) pidfd_open failed with errno %d, want %d", d.name, got, d.errno)
		}
	}
}

// hostTree is the container seen from the host: its PID 1 and lfinit.
type hostTree struct {
	t      *testing.T
	init   int // podman's init, the container's PID 1 (host pid)
	lfinit int // lfinit's host pid
}

// underInit finds lfinit behind podman's init, from the host, and checks
// that it is not PID 1 there.
func underInit(c *ctr) *hostTree {
	c.t.Helper()
	out := podman(c.t, "inspect", "--format", "{{.State.Pid}}", c.name)
	init, err := strconv.Atoi(out)
	if err != nil || init <= 0 {
		c.t.Fatalf("podman inspect State.Pid: %q", out)
	}
	if comm := readComm(init); comm != "podman-init" {
		c.t.Fatalf("the container's PID 1 is %q, want podman's init (catatonit at /run/podman-init)", comm)
	}
	h := &hostTree{t: c.t, init: init}
	waitFor(c.t, 15*time.Second, "lfinit as the child of podman's init", func() bool {
		for _, p := range childrenOf(init) {
			if readComm(p) == "lfinit" {
				h.lfinit = p
				return true
			}
		}
		return false
	})
	return h
}

func readComm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

func childrenOf(pid int) []int {
	var kids []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				kids = append(kids, n)
			}
		}
	}
	return kids
}

// hostPid is the host pid of the container's process inner (a pid in the
// container's namespace, as the helper writes it), found from the
// container's PID 1 down (the host may hold many other processes).
func (h *hostTree) hostPid(inner int) int {
	h.t.Helper()
	for todo := []int{h.init}; len(todo) > 0; todo = todo[1:] {
		pid := todo[0]
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "NSpid:" && f[len(f)-1] == strconv.Itoa(inner) {
				return pid
			}
		}
		todo = append(todo, childrenOf(pid)...)
	}
	h.t.Fatalf("no process of the container has pid %d in it", inner)
	return 0
}

// watched is a process the host holds a pidfd of, so its exit is seen
// whatever reaps it and whenever.
type watched struct {
	name string
	fd   int
}

func watch(t *testing.T, name string, pid int) watched {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open(%s, host pid %d): %v", name, pid, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return watched{name, fd}
}

// exited waits up to limit for w to exit and reports whether it did.
func (w watched) exited(limit time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	for deadline := time.Now().Add(limit); ; {
		ms := max(int(time.Until(deadline).Milliseconds()), 0)
		n, err := unix.Poll(fds, ms)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0
	}
}

// outlived fails the test for each of the leftovers still alive the
// moment lfinit has exited: lfinit reaps its tree before it exits, and
// the leftovers could otherwise only have died of catatonit's exit (the
// kernel ends a PID namespace with its PID 1), which lfinit would then
// have reported as its own work.
func outlived(t *testing.T, lfinit watched, leftovers []watched, limit time.Duration) {
	t.Helper()
	if !lfinit.exited(limit) {
		t.Fatalf("lfinit still runs after %v", limit)
	}
	for _, l := range leftovers {
		if !l.exited(0) {
			t.Errorf("%s was still running when lfinit exited", l.name)
		}
	}
}

// statusFile is what the tests read of lfinit's status file.
type statusFile struct {
	Phase        string `json:"phase"`
	Outcome      string `json:"outcome"`
	ExitCode     *int   `json:"exit_code"`
	Killed       int    `json:"killed"`
	NotSignalled int    `json:"not_signalled"`
	TreeMethod   string `json:"tree_method"`
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func (c *ctr) status() statusFile {
	c.t.Helper()
	b, err := os.ReadFile(c.path("status.json"))
	if err != nil {
		c.t.Fatal(err)
	}
	var s statusFile
	if err := json.Unmarshal(b, &s); err != nil {
		c.t.Fatalf("status file: %v\n%s", err, b)
	}
	return s
}

func (c *ctr) pidFile(name string) int {
	c.t.Helper()
	b, err := os.ReadFile(c.path(name))
	if err != nil {
		c.t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		c.t.Fatalf("/rec/%s: %q is not a pid", name, b)
	}
	return pid
}

// logTime is when lfinit wrote l.
func logTime(t *testing.T, l logLine) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, l.str("time"))
	if err != nil {
		t.Fatalf("log line time %q: %v", l.str("time"), err)
	}
	return at
}

// notPID1 checks lfinit's start line: not PID 1, walking its own tree.
func notPID1(t *testing.T, lines []logLine) {
	t.Helper()
	l, ok := find(lines, "started")
	if !ok {
		t.Errorf("no 'started' line in lfinit's log")
		return
	}
	if l["pid1"] != false || l.num("pid") == 1 {
		t.Errorf("lfinit started with pid=%v pid1=%v, want it not PID 1 behind podman's init", l["pid"], l["pid1"])
	}
}

// TestLeftoversUnderPodmanWithoutPidfd: the child starts two processes
// that ignore SIGTERM, each in a session of its own (test/helper -daemon,
// run twice by /bin/each), and exits 0 when the test says so. lfinit
// TERMs both, SIGKILLs them one floor later, reaps them, counts them
// (killed=2, leftovers=2, none not signalled) and exits with the child's 0.
func TestLeftoversUnderPodmanWithoutPidfd(t *testing.T) {
	needPodman(t)
	for _, d := range pidfdDenials {
		t.Run(d.name, func(t *testing.T) {
			c := run(t, baseImage, []string{"--init", "--security-opt", "seccomp=" + withoutPidfd(t, d)},
				"--floor=500ms", "--status-file=/rec/status.json", "--",
				"/bin/each", "2", "/rec/go", "/helper", "-record", "/rec/record",
				"-daemon", "/rec/daemon-{}.pid", "-daemon-ignore-term", "-exit", "0")
			c.waitFile("daemon-2.pid")
			h := underInit(c)
			lfinit := watch(t, "lfinit", h.lfinit)
			var leftovers []watched
			for _, f := range []string{"daemon-1.pid", "daemon-2.pid"} {
				leftovers = append(leftovers, watch(t, "the daemon of "+f, h.hostPid(c.pidFile(f))))
			}
			if err := os.WriteFile(c.path("go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			begun := time.Now()
			outlived(t, lfinit, leftovers, 20*time.Second)
			took := time.Since(begun)
			t.Logf("timing: %s: child told to exit, lfinit exited after %v", d.name, took.Round(time.Millisecond))
			between(t, "the cleanup (the floor between TERM and KILL)", took, 450*time.Millisecond, 5*time.Second)
			waitFor(t, 20*time.Second, "the container to exit", func() bool {
				out, _ := podmanCmd(30*time.Second, "inspect", "--format", "{{.State.Status}}", c.name)
				return out == "exited" || out == "stopped"
			})

			l := checkExit(t, c, "child-exited", 0)
			if l.num("killed") != 2 || l.num("leftovers") != 2 || l.num("not_signalled") != 0 {
				t.Errorf("lfinit's exit line: killed=%v leftovers=%v not_signalled=%v, want 2, 2 and none", l["killed"], l["leftovers"], l["not_signalled"])
			}
			lines := c.lfinitLog()
			notPID1(t, lines)
			// The daemons ignore TERM for real (SIG_IGN), so it leaves no trace
			// in them: lfinit's two lines say TERM, then one floor later
			// SIGKILL, to exactly the two daemons.
			term, ok1 := find(lines, "terminating leftovers of the child", "leftovers", "2")
			kill, ok2 := find(lines, "hard deadline: killed the process tree", "signal", "SIGKILL", "killed", "2")
			if !ok1 || !ok2 {
				t.Fatalf("want lfinit's 'terminating leftovers of the child' leftovers=2 and 'hard deadline: killed the process tree' killed=2 lines")
			}
			between(t, "from the leftovers' TERM to their SIGKILL (the floor)", logTime(t, kill).Sub(logTime(t, term)), 450*time.Millisecond, 3*time.Second)
			var want []string
			for _, f := range []string{"daemon-1.pid", "daemon-2.pid"} {
				want = append(want, fmt.Sprintf("helper[%d]", c.pidFile(f)))
			}
			var got []string
			names, _ := kill["still_running"].([]any)
			for _, p := range names {
				got = append(got, fmt.Sprint(p))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("SIGKILLed %s, want the two daemons %s", got, want)
			}
			s := c.status()
			if s.Killed != 2 || s.NotSignalled != 0 || s.Outcome != "child-exited" || s.ExitCode == nil || *s.ExitCode != 0 {
				t.Errorf("status file: killed=%d not_signalled=%d outcome=%s exit_code=%v, want 2, 0, child-exited and 0", s.Killed, s.NotSignalled, s.Outcome, deref(s.ExitCode))
			}
			t.Logf("%s: tree_method=%s", d.name, s.TreeMethod)
		})
	}
}

// TestDeadlineUnderPodmanWithoutPidfd: the child ignores SIGTERM, and so
// does its daemon in a session of its own; `podman stop -t 10` reaches
// lfinit through catatonit, and the hard deadline (--grace=2s
// --floor=500ms) SIGKILLs both: lfinit exits 1 at 2.5 s, well inside
// podman's 10 s, having killed and reaped both.
func TestDeadlineUnderPodmanWithoutPidfd(t *testing.T) {
	needPodman(t)
	for _, d := range pidfdDenials {
		t.Run(d.name, func(t *testing.T) {
			c := run(t, baseImage, []string{"--init", "--security-opt", "seccomp=" + withoutPidfd(t, d)},
				lfinitArgs([]string{"--grace=2s", "--floor=500ms", "--status-file=/rec/status.json"},
					"-die-on", "", "-daemon", "/rec/daemon.pid", "-daemon-ignore-term")...)
			c.waitFile("ready")
			c.waitFile("daemon.pid")
			h := underInit(c)
			lfinit := watch(t, "lfinit", h.lfinit)
			daemon := watch(t, "the daemon", h.hostPid(c.pidFile("daemon.pid")))

			// In the background, so the host watches lfinit as it stops; it
			// touches no t, and the channel is buffered, so a failed test
			// leaves it nothing to block on.
			type result struct {
				took time.Duration
				err  error
				out  string
			}
			returned := make(chan result, 1)
			go func() {
				begun := time.Now()
				out, err := podmanCmd(time.Minute, "stop", "--time", "10", c.name)
				returned <- result{time.Since(begun), err, out}
			}()
			begun := time.Now()
			outlived(t, lfinit, []watched{daemon}, 20*time.Second)
			took := time.Since(begun)
			r := <-returned
			if r.err != nil {
				t.Fatalf("podman stop: %v\n%s", r.err, r.out)
			}
			t.Logf("timing: %s: podman stop -t 10, lfinit exited after %v (podman stop returned after %v)",
				d.name, took.Round(time.Millisecond), r.took.Round(time.Millisecond))
			between(t, "lfinit's deadline stop (grace 2s + floor 500ms)", took, 2300*time.Millisecond, 6*time.Second)

			l := checkExit(t, c, "deadline-exceeded", 1)
			if l.num("killed") != 2 || l.num("not_signalled") != 0 {
				t.Errorf("lfinit's exit line: killed=%v not_signalled=%v, want 2 (the child and its daemon) and none", l["killed"], l["not_signalled"])
			}
			// From the signal lfinit got to its exit: grace + floor, then the
			// kill and the reaping.
			between(t, "lfinit's shutdown_duration", l.dur(t, "shutdown_duration"), 2400*time.Millisecond, 4*time.Second)
			notPID1(t, c.lfinitLog())
			if !c.recorded("signal 15 ") {
				t.Errorf("podman stop's TERM never reached the child through catatonit and lfinit")
			}
			if s := c.status(); s.Killed != 2 || s.NotSignalled != 0 || s.Outcome != "deadline-exceeded" {
				t.Errorf("status file: killed=%d not_signalled=%d outcome=%s, want 2, 0 and deadline-exceeded", s.Killed, s.NotSignalled, s.Outcome)
			}
		})
	}
}

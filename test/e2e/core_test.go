package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestExitCodePassthrough(t *testing.T) {
	t.Parallel()
	for _, code := range []int{0, 1, 3, 42, 126, 255} {
		r := startPID1(t, "HELPER", "-exit", strconv.Itoa(code))
		if got := r.wait(10 * time.Second); got != code {
			t.Errorf("child exits %d: lfinit exited %d", code, got)
		}
	}
}

func TestChildKilledBySignalGives128PlusN(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGUSR1, syscall.SIGSEGV, syscall.SIGKILL} {
		r := startPID1(t, "--", "sh", "-c", fmt.Sprintf("kill -%d $$", sig))
		if got := r.wait(10 * time.Second); got != 128+int(sig) {
			t.Errorf("child killed by %v: lfinit exited %d, want %d", sig, got, 128+int(sig))
		}
	}
}

func TestExitMap(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--exit-map", "143=0", "--exit-map=7=9", "HELPER", "-exit", "7")
	if got := r.wait(10 * time.Second); got != 9 {
		t.Fatalf("exit 7 mapped 7=9: got %d", got)
	}
	r = startPID1(t, "--exit-map", "143=0", "HELPER", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 0 {
		t.Fatalf("graceful TERM with 143=0: got %d", got)
	}
}

func TestExecFailures(t *testing.T) {
	t.Parallel()
	needRoot(t)
	dir := t.TempDir()
	plain := dir + "/plain"
	os.WriteFile(plain, []byte("echo hi\n"), 0o644)
	badInterp := dir + "/badinterp"
	os.WriteFile(badInterp, []byte("#!/nonexistent/interp\n"), 0o755)
	for _, tc := range []struct {
		cmd  string
		code int
		msg  string
	}{
		{"no-such-program-xyz", 127, "not found in PATH"},
		{"/no/such/path", 127, "no such file"},
		{plain, 126, "permission denied"},
		{"/etc", 126, "is a directory"},
		{badInterp, 126, "interpreter"},
	} {
		r := startPID1(t, "--", tc.cmd)
		if got := r.wait(10 * time.Second); got != tc.code {
			t.Errorf("%s: exit %d, want %d", tc.cmd, got, tc.code)
		}
		if log := r.stderr.String(); !strings.Contains(log, tc.msg) || !strings.Contains(log, "outcome=failed") {
			t.Errorf("%s: log lacks %q and outcome=failed:\n%s", tc.cmd, tc.msg, log)
		}
	}
}

// TestScriptWithoutShebang: a script with no #! line runs with /bin/sh,
// as execvp (and so tini, dumb-init and catatonit) runs it.
func TestScriptWithoutShebang(t *testing.T) {
	t.Parallel()
	needRoot(t)
	dir := t.TempDir()
	os.WriteFile(dir+"/legacy", []byte("echo \"args: $1\"\nexit 42\n"), 0o755)
	r := startPID1(t, "--", dir+"/legacy", "one")
	if got := r.wait(10 * time.Second); got != 42 {
		t.Fatalf("exit %d, want the script's 42:\n%s", got, r.stderr.String())
	}
	if out := r.stdout.String(); out != "args: one\n" {
		t.Fatalf("script printed %q", out)
	}
}

func TestOptionParsingStopsAtTheCommand(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "echo", "-v", "--grace", "x")
	if got := r.wait(10 * time.Second); got != 0 {
		t.Fatalf("exit %d", got)
	}
	if out := r.stdout.String(); out != "-v --grace x\n" {
		t.Fatalf("child got %q, want the words after the command untouched", out)
	}
}

func TestFlagWinsOverEnvironment(t *testing.T) {
	t.Parallel()
	needRoot(t)
	cmd := exec.Command(lfinitBin, "--exit-map", "5=6", "sh", "-c", "exit 5")
	cmd.Env = append(os.Environ(), "LFINIT_EXIT_MAP=5=7", "LFINIT_LOG_FORMAT=json")
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 6 {
		t.Errorf("flag --exit-map 5=6 vs LFINIT_EXIT_MAP=5=7: exit %d, want 6", code)
	}
	if !strings.Contains(string(out), `"msg":"exit"`) {
		t.Errorf("LFINIT_LOG_FORMAT=json not applied:\n%s", out)
	}
}

// everyRelayed is the list the forwarding test walks: the signals users
// and orchestrators send (stop, reload, log rotation, window size, job
// control, alarms), plus real-time ones.
var everyRelayed = []syscall.Signal{
	syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2,
	syscall.SIGWINCH, syscall.SIGALRM, syscall.SIGCONT, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU,
	35, 40, 50, 64,
}

func TestEverySignalIsForwarded(t *testing.T) {
	long(t)
	t.Parallel()
	// SIGPWR is the shutdown signal here so that TERM and INT are plain relays.
	r := startPID1(t, "--shutdown-signals", "PWR", "HELPER", "-record", "DIR/rec", "-die-on", "", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	for _, sig := range everyRelayed {
		r.signal(sig)
		recorded(t, r.path("rec"), "signal", int(sig))
	}
	r.signal(syscall.SIGPWR)
	if got := r.wait(15 * time.Second); got != 1 {
		t.Fatalf("exit %d: a child that ignores its stop signal is a forced stop, want 1", got)
	}
	got := signals(readRecord(t, r.path("rec")), "signal")
	want := []int{}
	for _, s := range everyRelayed {
		want = append(want, int(s))
	}
	want = append(want, int(syscall.SIGPWR), int(syscall.SIGPWR))
	if !slices.Equal(got, want) {
		t.Fatalf("child received %v, want %v (each relayed once, then PWR as stop and deadline signal)", got, want)
	}
}

func TestInternalSignalsAreNotForwardedAndDoNotHurt(t *testing.T) {
	t.Parallel()
	needRoot(t)
	dir := t.TempDir()
	script := `trap 'echo PIPE >> $0.got' PIPE; trap 'echo URG >> $0.got' URG; trap 'echo WINCH >> $0.got; exit 0' WINCH; touch $0.ready; while :; do sleep 0.02; done`
	r := startPID1(t, "--", "sh", "-c", script, dir+"/sh")
	waitFor(t, 5*time.Second, "sh ready", func() bool { _, err := os.Stat(dir + "/sh.ready"); return err == nil })
	for i := 0; i < 20; i++ {
		r.signal(syscall.SIGPIPE)
		r.signal(syscall.SIGURG)
		r.signal(syscall.SIGCHLD)
	}
	// WINCH (28), sent last, is the barrier: pending standard signals are
	// taken lowest number first, by the kernel, by the Go runtime and by
	// the shell's traps alike, so a PIPE (13) or URG (23) that lfinit
	// relayed would be in the file before WINCH, never after it.
	r.signal(syscall.SIGWINCH)
	if got := r.wait(10 * time.Second); got != 0 {
		t.Fatalf("exit %d, want 0 (lfinit lived through them and relayed WINCH)", got)
	}
	b, _ := os.ReadFile(dir + "/sh.got")
	if string(b) != "WINCH\n" {
		t.Fatalf("child saw %q, want only WINCH (no PIPE, no URG)", b)
	}
}

func TestGroupForwarding(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"child", "group"} {
		r := startPID1(t, "--forward-to", mode, "HELPER", "-record", "DIR/rec", "-children", "2", "-ready-file", "DIR/ready")
		r.waitFile("ready")
		r.signal(syscall.SIGUSR2)
		recorded(t, r.path("rec"), "signal", int(syscall.SIGUSR2))
		if mode == "group" {
			waitFor(t, 5*time.Second, "both children got USR2", func() bool {
				return len(signals(readRecord(t, r.path("rec")), "child-signal")) == 2
			})
		}
		r.signal(syscall.SIGTERM)
		if got := r.wait(10 * time.Second); got != 143 {
			t.Fatalf("%s: exit %d, want 143", mode, got)
		}
		if mode == "child" {
			grandchildrenGotOnlyTheirTerm(t, r.path("rec"), "--forward-to=child")
		}
	}
}

// grandchildrenGotOnlyTheirTerm checks, once lfinit has exited, that the
// helper's two -children got nothing but the SIGTERM of the cleanup after
// the helper's death. That TERM is the proof: it was sent after anything
// relayed to them before, and each records its signals in order, the
// TERM last (it dies by it).
func grandchildrenGotOnlyTheirTerm(t *testing.T, rec, what string) {
	t.Helper()
	if got := signals(readRecord(t, rec), "child-signal"); !slices.Equal(got, []int{15, 15}) {
		t.Fatalf("%s: the grandchildren got %v, want only the cleanup's TERM each (nothing relayed to them)", what, got)
	}
}

func TestChildIgnoringTermIsKilledAtGracePlusFloor(t *testing.T) {
	long(t)
	t.Parallel()
	r := startPID1(t, "--grace", "1s", "--floor", "500ms", "HELPER", "-record", "DIR/rec", "-ignore", "15",
		"-children", "2", "-children-ignore-term", "-daemon", "DIR/daemon.pid", "-daemon-ignore-term", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	sent := time.Now()
	r.signal(syscall.SIGTERM)
	if got := r.wait(15 * time.Second); got != 1 {
		t.Fatalf("exit %d, want 1 (deadline exceeded), never 0 or 137", got)
	}
	between(t, "TERM to exit", time.Since(sent), 1400*time.Millisecond, 4*time.Second)
	evs := readRecord(t, r.path("rec"))
	if got := signals(evs, "signal"); !slices.Equal(got, []int{15, 15}) {
		t.Fatalf("child got %v, want TERM (stop) and TERM (deadline)", got)
	}
	between(t, "stop to deadline signal", evs[len(evs)-1].at.Sub(firstSignal(t, evs, "signal", 15)), 800*time.Millisecond, 2*time.Second)
	log := r.stderr.String()
	for _, want := range []string{"outcome=deadline-exceeded", "exit_code=1", "hard deadline: killed the process tree", "phase=draining"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if strings.Contains(log, "graceful") {
		t.Errorf("log says graceful after a deadline:\n%s", log)
	}
	killed := logInt(t, log, "killed")
	if killed < 4 {
		t.Errorf("killed=%d, want the child, two grandchildren and the daemon", killed)
	}
}

func TestSecondSignalHurries(t *testing.T) {
	long(t)
	t.Parallel()
	r := startPID1(t, "--grace", "20s", "--floor", "700ms", "HELPER", "-record", "DIR/rec", "-ignore", "15,2", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	r.signal(syscall.SIGTERM)
	recorded(t, r.path("rec"), "signal", 15)
	second := time.Now()
	r.signal(syscall.SIGINT)
	if got := r.wait(10 * time.Second); got != 1 {
		t.Fatalf("exit %d, want 1", got)
	}
	between(t, "second signal to exit", time.Since(second), 600*time.Millisecond, 3*time.Second)
	if got := signals(readRecord(t, r.path("rec")), "signal"); !slices.Equal(got, []int{15, 15}) {
		t.Fatalf("child got %v, want TERM then TERM (the deadline signal, sent at once)", got)
	}
}

func TestSecondSignalWhileQuiescingForwardsAtOnce(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--grace", "20s", "--drain-delay", "10s", "HELPER", "-record", "DIR/rec", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	r.signal(syscall.SIGTERM)
	r.waitLog("phase=quiescing")
	second := time.Now()
	if err := r.trySignal(syscall.SIGINT); err != nil {
		t.Fatalf("lfinit gone while quiescing, with a drain delay of 10s: %v", err)
	}
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d, want 143 (the child's own death by the stop signal, TERM)", got)
	}
	// The child's record, with its own clock reading, proves it got the
	// stop signal once, and only after the second signal was sent: never
	// in the quiesce before it.
	evs := readRecord(t, r.path("rec"))
	if got := signals(evs, "signal"); !slices.Equal(got, []int{15}) {
		t.Fatalf("child got %v, want TERM once", got)
	}
	if at := firstSignal(t, evs, "signal", 15); at.Before(second) {
		t.Fatalf("child got TERM %v before the second signal was sent: it was forwarded while quiescing", second.Sub(at))
	}
}

func TestDrainDelayHoldsTheStopSignal(t *testing.T) {
	long(t)
	t.Parallel()
	r := startPID1(t, "--grace", "5s", "--drain-delay", "1s", "HELPER", "-record", "DIR/rec", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	sent := time.Now()
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d, want 143", got)
	}
	got := firstSignal(t, readRecord(t, r.path("rec")), "signal", 15)
	between(t, "TERM to the child's TERM", got.Sub(sent), 950*time.Millisecond, 2500*time.Millisecond)
	log := r.stderr.String()
	if i, j := strings.Index(log, "phase=quiescing"), strings.Index(log, "phase=draining"); i < 0 || j < i {
		t.Fatalf("want quiescing then draining in the log:\n%s", log)
	}
	if !strings.Contains(log, "outcome=graceful") {
		t.Fatalf("want outcome=graceful:\n%s", log)
	}
}

func TestStopSignalRewrite(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--stop-signal", "QUIT", "HELPER", "-record", "DIR/rec", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 131 {
		t.Fatalf("exit %d, want 131 (died by the rewritten QUIT)", got)
	}
	if got := signals(readRecord(t, r.path("rec")), "signal"); !slices.Equal(got, []int{3}) {
		t.Fatalf("child got %v, want only QUIT", got)
	}
}

func TestDeadlineSignal(t *testing.T) {
	long(t)
	t.Parallel()
	r := startPID1(t, "--grace", "600ms", "--floor", "2s", "--deadline-signal", "USR2", "HELPER", "-record", "DIR/rec", "-die-on", "12", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	sent := time.Now()
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 1 {
		t.Fatalf("exit %d, want 1: the child died after the grace deadline, within the floor", got)
	}
	between(t, "TERM to exit", time.Since(sent), 500*time.Millisecond, 1900*time.Millisecond)
	if got := signals(readRecord(t, r.path("rec")), "signal"); !slices.Equal(got, []int{15, 12}) {
		t.Fatalf("child got %v, want TERM then USR2", got)
	}
}

func TestLeftoversAreCleanedUpAfterTheChildExits(t *testing.T) {
	long(t)
	t.Parallel()
	r := startPID1(t, "HELPER", "-record", "DIR/rec", "-children", "2", "-exit", "4", "-after", "100ms")
	if got := r.wait(10 * time.Second); got != 4 {
		t.Fatalf("exit %d, want the child's 4", got)
	}
	if got := signals(readRecord(t, r.path("rec")), "child-signal"); !slices.Equal(got, []int{15, 15}) {
		t.Fatalf("leftovers got %v, want TERM each", got)
	}
	if !strings.Contains(r.stderr.String(), "phase=cleaning-up") {
		t.Fatal("no cleaning-up phase in the log")
	}

	r = startPID1(t, "--floor", "400ms", "HELPER", "-record", "DIR/rec", "-children", "2", "-children-ignore-term", "-exit", "0", "-after", "100ms")
	if got := r.wait(10 * time.Second); got != 0 {
		t.Fatalf("exit %d, want the child's 0", got)
	}
	between(t, "run with stubborn leftovers", r.took, 450*time.Millisecond, 4*time.Second)
	if n := logInt(t, r.stderr.String(), "killed"); n < 2 {
		t.Fatalf("killed=%d, want both stubborn leftovers", n)
	}
}

func TestThousandsOfOrphansLeaveNoZombie(t *testing.T) {
	long(t)
	t.Parallel()
	const n = 3000
	r := startPID1(t, "HELPER", "-record", "DIR/rec", "-orphans", strconv.Itoa(n), "-ready-file", "DIR/ready")
	reapsEveryOrphan(t, r, n)
	r.signal(syscall.SIGTERM)
	if got := r.waitMoving(func() string { return strconv.Itoa(r.nsProcs()) }); got != 143 {
		t.Fatalf("exit %d, want 143", got)
	}
	if got := logInt(t, r.stderr.String(), "reaped"); got < n+1 {
		t.Fatalf("reaped=%d, want every orphan and the child (%d)", got, n+1)
	}
}

// reapsEveryOrphan waits while the helper of r (PID 1's child, run with
// -record DIR/rec -ready-file DIR/ready) makes its n orphans, then while
// lfinit reaps them, until its namespace holds only lfinit and the
// helper: every orphan reaped, no zombie left. Each wait lasts as long
// as its work moves (the orphans made, the namespace's size): how long
// thousands of forks take is the machine's speed, not lfinit's.
func reapsEveryOrphan(t *testing.T, r *run, n int) {
	t.Helper()
	alive := func() {
		select {
		case <-r.done:
			t.Fatalf("lfinit exited %d before the test stopped it:\n%s", r.code, r.stderr.String())
		default:
		}
	}
	made := func() string {
		return fmt.Sprintf("%d orphans made, %d processes in the namespace", orphansMade(r.path("rec")), r.nsProcs())
	}
	waitMoving(t, fmt.Sprintf("the helper to make %d orphans", n), func() bool {
		alive()
		_, err := os.Stat(r.path("ready"))
		return err == nil
	}, made)
	if got := orphansMade(r.path("rec")); got != n {
		t.Fatalf("the helper made %d orphans, want %d", got, n)
	}
	// Dead ones are zombies until reaped, and so still in the namespace's
	// /proc; the last ones sleep 200ms first.
	waitMoving(t, "every orphan reaped (only lfinit and the helper in the namespace)", func() bool {
		alive()
		return r.nsProcs() == 2
	}, made)
}

// TestChildExitInAStormOfOrphans: the child exits while thousands of its
// orphans are exiting (full reaps are paced then, and SIGCHLD is not
// listened to during a pause): lfinit still sees the exit, cleans up the
// leftovers, reaps everything and exits with the child's code.
func TestChildExitInAStormOfOrphans(t *testing.T) {
	long(t)
	t.Parallel()
	const n = 3000
	r := startPID1(t, "HELPER", "-record", "DIR/rec", "-orphans", strconv.Itoa(n), "-exit", "7")
	// As long as orphans are made, die and are reaped, and lfinit logs.
	got := r.waitMoving(func() string {
		return fmt.Sprintf("%d orphans made, %d processes in the namespace", orphansMade(r.path("rec")), r.nsProcs())
	})
	if got != 7 {
		t.Fatalf("exit %d, want the child's 7", got)
	}
	if made := orphansMade(r.path("rec")); made != n {
		t.Fatalf("the helper made %d orphans, want %d", made, n)
	}
	log := r.stderr.String()
	if !strings.Contains(log, "outcome=child-exited") {
		t.Fatalf("no child-exited outcome:\n%s", log)
	}
	if got := logInt(t, log, "reaped"); got < n+1 {
		t.Fatalf("reaped=%d, want every orphan and the child (%d)", got, n+1)
	}
}

func TestStartsWithCleanSignalState(t *testing.T) {
	t.Parallel()
	needRoot(t)
	// nohup-style: lfinit is started with INT and HUP ignored, and (below)
	// with signals blocked; its child must see neither.
	out, err := exec.Command("sh", "-c", `trap "" INT HUP QUIT; exec "$0" -- cat /proc/self/status`, lfinitBin).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"SigIgn", "SigBlk"} {
		if v := statusField(string(out), field); v != "0000000000000000" {
			t.Errorf("child %s = %s, want none", field, v)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "E2E_EXEC_BLOCKED="+strings.Join([]string{lfinitBin, "--", "cat", "/proc/self/status"}, "\x1f"))
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("blocked-mask run: %v", err)
	}
	if v := statusField(string(out), "SigBlk"); v != "0000000000000000" {
		t.Errorf("lfinit started with TERM/HUP/USR1 blocked: child SigBlk = %s, want none", v)
	}
}

// TestChildInheritsTheCPUAffinity: lfinit confines its own threads for
// the signal round trips of its start; the child, started directly or
// through the exec step (--watchdog), gets the CPUs lfinit was started
// with, and so do all of lfinit's threads once the child runs.
func TestChildInheritsTheCPUAffinity(t *testing.T) {
	t.Parallel()
	own, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	all := statusField(string(own), "Cpus_allowed_list")
	// The child prints its own CPUs, then those of lfinit's threads.
	script := `grep -h Cpus_allowed_list /proc/self/status /proc/$PPID/task/*/status`
	for _, c := range []struct {
		name, cpus string
		flags      []string
	}{
		{"all", all, nil},
		{"one", "0", nil},
		{"exec step", all, []string{"--ready-notify", "abstract", "--watchdog", "10s"}},
	} {
		for range 10 {
			args := append(append([]string{"-c", c.cpus, lfinitBin}, c.flags...), "--", "sh", "-c", script)
			out, err := exec.Command("taskset", args...).Output()
			if err != nil {
				t.Fatalf("%s: taskset %v: %v", c.name, args, err)
			}
			lines := strings.Fields(strings.ReplaceAll(string(out), "Cpus_allowed_list:", ""))
			if len(lines) < 2 {
				t.Fatalf("%s: want the child's and lfinit's threads' CPUs, got %q", c.name, out)
			}
			for i, got := range lines {
				if got != c.cpus {
					t.Fatalf("%s: %s has CPUs %s, want %s (all: %q)", c.name, map[bool]string{true: "the child", false: "a thread of lfinit"}[i == 0], got, c.cpus, lines)
				}
			}
		}
	}
}

func TestChildSeesOnlyStdio(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--", "sleep", "30")
	lf := r.lfinitPid()
	var child int
	// Wait for the exec, not the fork: before exec the forked child still
	// holds lfinit's descriptors.
	waitFor(t, 5*time.Second, "sleep started", func() bool {
		kids := childrenOf(lf)
		if len(kids) != 1 {
			return false
		}
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", kids[0]))
		child = kids[0]
		return strings.TrimSpace(string(comm)) == "sleep"
	})
	// sleep itself may open a file for a moment as it starts (its locale):
	// a descriptor lfinit leaked stays, so wait for the set to settle.
	var fds []string
	deadline := time.Now().Add(3 * time.Second)
	for fds = openFDs(t, child); strings.Join(fds, ",") != "0,1,2"; fds = openFDs(t, child) {
		if time.Now().After(deadline) {
			t.Fatalf("child has descriptors %v, want exactly 0,1,2", fds)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, fd := range []string{"1", "2"} {
		mine, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", lf, fd))
		its, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", child, fd))
		if mine != its {
			t.Errorf("fd %s: child has %q, lfinit %q: output must not go through lfinit", fd, its, mine)
		}
	}
	r.signal(syscall.SIGTERM)
	r.wait(10 * time.Second)
}

// openFDs lists pid's open descriptors, each with what it points to
// beyond the standard three.
func openFDs(t *testing.T, pid int) []string {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	var fds []string
	for _, e := range entries {
		name := e.Name()
		if name > "2" || len(name) > 1 {
			to, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, name))
			name += "=" + to
		}
		fds = append(fds, name)
	}
	return fds
}

func TestSurvivesBrokenStderr(t *testing.T) {
	t.Parallel()
	needRoot(t)
	pr, pw, _ := os.Pipe()
	pr.Close() // nobody will ever read lfinit's log
	cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc", lfinitBin, "--", "sh", "-c", "sleep 0.3; exit 5")
	cmd.Stderr, cmd.Stdout = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 5 {
		t.Fatalf("exit %d with a broken stderr, want the child's 5", code)
	}
}

func TestSubreaperModeKillsOnlyItsOwnTree(t *testing.T) {
	long(t)
	t.Parallel()
	needRoot(t)
	// Outsiders that record every signal: one in the test's own process
	// group (lfinit's parent's group), one in a session of its own.
	dir := t.TempDir()
	var outsiders []*exec.Cmd
	for i, args := range [][]string{{}, {"-setsid"}} {
		o := exec.Command(helperBin, append(args, "-record", fmt.Sprintf("%s/outsider%d.rec", dir, i), "-die-on", "", "-ready-file", fmt.Sprintf("%s/outsider%d.ready", dir, i))...)
		if err := o.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { o.Process.Kill(); o.Wait() }()
		outsiders = append(outsiders, o)
		waitFor(t, 5*time.Second, "outsider ready", func() bool { _, err := os.Stat(fmt.Sprintf("%s/outsider%d.ready", dir, i)); return err == nil })
	}
	// Every kill path: group relay, stop and deadline signals to the group,
	// SIGTERM to leftovers, SIGKILL of the tree.
	r := startSubreaper(t, "--grace", "500ms", "--floor", "300ms", "--forward-to", "group", "HELPER", "-record", "DIR/rec", "-ignore", "15",
		"-daemon", "DIR/daemon.pid", "-daemon-ignore-term", "-children", "1", "-children-ignore-term", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	daemon := readPid(t, r.path("daemon.pid"))
	if !alive(daemon) {
		t.Fatal("daemon not running")
	}
	r.signal(syscall.SIGUSR1)
	recorded(t, r.path("rec"), "child-signal", int(syscall.SIGUSR1))
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 1 {
		t.Fatalf("exit %d, want 1", got)
	}
	if alive(daemon) {
		t.Fatalf("the setsid daemon %d outlived lfinit", daemon)
	}
	for i, o := range outsiders {
		if !alive(o.Process.Pid) {
			t.Fatalf("outsider %d was killed", i)
		}
		if got := signals(readRecord(t, fmt.Sprintf("%s/outsider%d.rec", dir, i)), "signal"); len(got) != 0 {
			t.Fatalf("outsider %d outside lfinit's tree received %v", i, got)
		}
	}
	if !strings.Contains(r.stderr.String(), "pid1=false") {
		t.Fatal("lfinit thought it was PID 1")
	}
	for _, p := range procTable() {
		if p.ppid == r.cmd.Process.Pid {
			t.Fatalf("process %d is still a child of the exited lfinit", p.pid)
		}
	}
}

func TestSubreaperReapsOrphans(t *testing.T) {
	long(t)
	t.Parallel()
	r := startSubreaper(t, "HELPER", "-record", "DIR/rec", "-orphans", "500", "-exit", "0", "-after", "500ms")
	if got := r.waitMoving(func() string { return strconv.Itoa(orphansMade(r.path("rec"))) }); got != 0 {
		t.Fatalf("exit %d", got)
	}
	if n := logInt(t, r.stderr.String(), "reaped"); n < 501 {
		t.Fatalf("reaped=%d, want 501", n)
	}
}

// logInt reads key=N from the final exit line of lfinit's log.
func logInt(t *testing.T, log, key string) int {
	t.Helper()
	i := strings.LastIndex(log, "msg=exit")
	if i < 0 {
		t.Fatalf("no exit line in log:\n%s", log)
	}
	for _, f := range strings.Fields(log[i:]) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatalf("no %s= in the exit line", key)
	return 0
}

func statusField(status, key string) string {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func TestPreserveFDsPassesOnlyWhatIsAsked(t *testing.T) {
	t.Parallel()
	needRoot(t)
	dir := t.TempDir()
	var extra []*os.File
	for i := 0; i < 3; i++ {
		f, err := os.Create(fmt.Sprintf("%s/f%d", dir, i))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		extra = append(extra, f)
	}
	// The inherited descriptors are 3, 4 and 5; the child gets 3 only.
	cmd := exec.Command(lfinitBin, "--preserve-fds", "1", "--", "sh", "-c", "exec ls /proc/self/fd")
	cmd.ExtraFiles = extra
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	// ls itself opens one descriptor (3 is taken, so it gets 4) to read the directory.
	if got := strings.Fields(string(out)); !slices.Equal(got, []string{"0", "1", "2", "3", "4"}) {
		t.Fatalf("child saw descriptors %v, want 0 1 2, the preserved 3, and ls's own 4", got)
	}
}

func TestSurvivesSignalsGoCannotCatch(t *testing.T) {
	t.Parallel()
	// Not PID 1, where a default disposition would kill lfinit.
	r := startSubreaper(t, "HELPER", "-record", "DIR/rec", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	for _, sig := range []syscall.Signal{32, 34, 32, 34} {
		r.signal(sig)
	}
	r.signal(syscall.SIGUSR2)
	recorded(t, r.path("rec"), "signal", int(syscall.SIGUSR2))
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d, want 143: lfinit must survive signals 32 and 34", got)
	}
}

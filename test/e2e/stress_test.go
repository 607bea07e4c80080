package e2e

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
	"github.com/light-fabric/lfinit/statusfile"
)

// scale picks the full size in normal runs and a smaller one with -short.
func scale(full, short int) int {
	if testing.Short() {
		return short
	}
	return full
}

// markEnv is a variable unique to one run: every process of its tree
// inherits it, so the test can find them all in /proc after lfinit is gone.
func markEnv(t *testing.T) string {
	return fmt.Sprintf("LFINIT_E2E_MARK=%s-%d", t.Name(), time.Now().UnixNano())
}

// marked lists the live processes whose environment holds mark.
func marked(mark string) []int {
	var out []int
	for _, p := range procTable() {
		if p.state == 'Z' {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.pid))
		if err == nil && bytes.Contains(env, []byte(mark)) {
			out = append(out, p.pid)
		}
	}
	return out
}

func vmHWM(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	return statusField(string(b), "VmHWM")
}

func TestSignalStorm(t *testing.T) {
	t.Parallel()
	n := scale(10000, 2000)
	r := startPID1(t, "HELPER", "-record", "DIR/rec", "-die-on", "15", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	r.lfinitPid()
	kinds := []syscall.Signal{syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGHUP, syscall.SIGWINCH, syscall.SIGCONT,
		syscall.SIGALRM, syscall.SIGPIPE, syscall.SIGURG, syscall.SIGCHLD, 32, 34, 40, 50, syscall.SIGQUIT}
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := r.trySignal(kinds[i%len(kinds)]); err != nil {
			t.Fatalf("signal %d: lfinit is gone: %v", i, err)
		}
	}
	t.Logf("%d signals sent in %v", n, time.Since(start))
	// The child is still running and still relays: a USR1 reaches it.
	r.signal(syscall.SIGUSR1)
	recorded(t, r.path("rec"), "signal", int(syscall.SIGUSR1))
	select {
	case <-r.done:
		t.Fatalf("lfinit exited %d during the storm", r.code)
	default:
	}
	sent := time.Now()
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d after the storm, want 143", got)
	}
	between(t, "shutdown after the storm", time.Since(sent), 0, 3*time.Second)
	// The storm may cost log lines (the queue drops rather than block),
	// never the final summary: it is written in line, last, and says how
	// the run ended.
	lines := logLines(r)
	if len(lines) == 0 {
		t.Fatal("no log line after the storm")
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "msg=exit") || !strings.Contains(last, "outcome=graceful") || !strings.Contains(last, "exit_code=143") {
		t.Fatalf("the last log line after the storm is not the graceful summary: %q", last)
	}
}

func TestFiftyThousandOrphans(t *testing.T) {
	long(t)
	t.Parallel()
	n := scale(50000, 5000)
	r := startPID1(t, "HELPER", "-record", "DIR/rec", "-orphans", strconv.Itoa(n), "-ready-file", "DIR/ready")
	reapsEveryOrphan(t, r, n)
	t.Logf("lfinit peak RSS after %d orphans: %s", n, vmHWM(r.lfinitPid()))
	r.signal(syscall.SIGTERM)
	if got := r.waitMoving(func() string { return strconv.Itoa(r.nsProcs()) }); got != 143 {
		t.Fatalf("exit %d", got)
	}
	if reaped := logInt(t, r.stderr.String(), "reaped"); reaped < n+1 {
		t.Fatalf("reaped=%d, want %d", reaped, n+1)
	}
}

// TestForkLoopDuringTheDeadlineKill: a setsid'd process that keeps forking
// and ignores SIGTERM must still be gone when lfinit exits, as PID 1 and
// as a subreaper.
func TestForkLoopDuringTheDeadlineKill(t *testing.T) {
	long(t)
	t.Parallel()
	for _, pid1 := range []bool{true, false} {
		mark := markEnv(t)
		args := []string{"--grace", "400ms", "--floor", "200ms", "HELPER", "-record", "DIR/rec", "-ignore", "15", "-forkloop", "-ready-file", "DIR/ready"}
		r := startWith(t, pid1, args, []string{mark})
		r.waitFile("ready")
		// Let the loop build up a crowd, however fast this machine forks.
		crowd := 0
		waitMoving(t, "the fork loop's crowd of 10", func() bool { crowd = len(marked(mark)); return crowd >= 10 },
			func() string { return strconv.Itoa(crowd) })
		sent := time.Now()
		r.signal(syscall.SIGTERM)
		if got := r.wait(10 * time.Second); got != 1 {
			t.Fatalf("pid1=%v: exit %d, want 1", pid1, got)
		}
		between(t, "shutdown with a fork loop", time.Since(sent), 500*time.Millisecond, 3*time.Second)
		if left := marked(mark); len(left) > 0 {
			t.Fatalf("pid1=%v: %d processes of the tree outlived lfinit: %v", pid1, len(left), left)
		}
	}
}

func TestStatusDirectoryReadOnlyOrFullMidRun(t *testing.T) {
	long(t)
	t.Parallel()
	for _, fault := range []string{"read-only", "full"} {
		// lfinit runs in its own mount namespace with a 64 KiB tmpfs for
		// its status file; the fault is injected there with nsenter.
		dir := t.TempDir()
		script := fmt.Sprintf(`mount -t tmpfs -o size=64k tmpfs %s && exec "$@"`, dir)
		r := startWith(t, true, []string{"--status-file", dir + "/status.json", "--grace", "600ms", "--floor", "200ms",
			"HELPER", "-record", "DIR/rec", "-ignore", "15", "-ready-file", "DIR/ready"}, nil, "sh", "-c", script, "sh")
		r.waitFile("ready")
		pid := r.lfinitPid()
		waitFor(t, 5*time.Second, "status file ready", func() bool {
			out, _ := exec.Command("nsenter", "-t", strconv.Itoa(pid), "-m", "cat", dir+"/status.json").Output()
			return bytes.Contains(out, []byte(`"phase": "ready"`))
		})
		var inject *exec.Cmd
		if fault == "read-only" {
			inject = exec.Command("nsenter", "-t", strconv.Itoa(pid), "-m", "mount", "-o", "remount,ro", dir)
		} else {
			inject = exec.Command("nsenter", "-t", strconv.Itoa(pid), "-m", "sh", "-c", "cat /dev/zero > "+dir+"/fill; true")
		}
		if out, err := inject.CombinedOutput(); err != nil {
			t.Fatalf("inject %s: %v %s", fault, err, out)
		}
		sent := time.Now()
		r.signal(syscall.SIGTERM)
		if got := r.wait(10 * time.Second); got != 1 {
			t.Fatalf("%s: exit %d, want 1 (the child ignores TERM)", fault, got)
		}
		between(t, fault+": TERM to exit", time.Since(sent), 700*time.Millisecond, 2*time.Second)
		log := r.stderr.String()
		if n := strings.Count(log, "cannot write the status file"); n != 1 {
			t.Fatalf("%s: %d log lines about the status file over several transitions, want exactly 1:\n%s", fault, n, log)
		}
		want := map[string]string{"read-only": "kind=read-only", "full": "kind=no-space"}[fault]
		if !strings.Contains(log, want) {
			t.Fatalf("%s: log lacks %s:\n%s", fault, want, log)
		}
		if got := signals(readRecord(t, r.path("rec")), "signal"); len(got) != 2 {
			t.Fatalf("%s: the child got %v, want its stop and deadline signals", fault, got)
		}
	}
}

// TestDeadlineUnderMetricsFlood: hundreds of idle and slow connections and
// tight scrapers on the metrics port while the deadline runs out.
func TestDeadlineUnderMetricsFlood(t *testing.T) {
	long(t)
	t.Parallel()
	r := startSubreaper(t, "--metrics-addr", "127.0.0.1:0", "--status-file", "DIR/status.json", "--grace", "500ms", "--floor", "200ms",
		"--", "sh", "-c", `trap "" TERM; sleep 60 & wait`)
	addr := r.metricsAddr()
	s := waitPhase(t, r.path("status.json"), statusfile.Ready)
	pidfd, err := unix.PidfdOpen(*s.ChildPid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pidfd)

	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < scale(500, 100); i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		if i%2 == 0 {
			c.Write([]byte("GET /metrics HTTP/1.1\r\nHost: x\r\n")) // a slow client: headers never end
		}
		conns = append(conns, c)
	}
	stopScraping := measure.Scrape("http://"+addr+"/metrics", 4)
	r.signal(syscall.SIGTERM)
	if err := measure.WaitPidfd(pidfd, 5*time.Second); err != nil {
		t.Fatalf("the child outlived the deadline: %v", err)
	}
	dead := time.Now()
	stopScraping()
	if got := r.wait(10 * time.Second); got != 1 {
		t.Fatalf("exit %d, want 1", got)
	}
	hard := readStatus(t, r.path("status.json")).HardDeadline
	late := dead.Sub(*hard)
	t.Logf("the child died %v after the hard deadline, under the flood", late)
	// The README's figure comes from bench/observe; this bound only catches
	// a kill that waits for HTTP (which would be hundreds of ms).
	if late > 100*time.Millisecond {
		t.Fatalf("the kill landed %v after the hard deadline", late)
	}
}

func TestClosedStdoutAndStderr(t *testing.T) {
	t.Parallel()
	needRoot(t)
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", `exec "$0" --grace 2s -- sh -c 'echo lost; echo lost >&2; touch "$1"; exit 7' sh "$1" >&- 2>&-`, lfinitBin, dir+"/ran")
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 7 {
		t.Fatalf("exit %d (%v), want the child's 7 with stdout and stderr closed", code, err)
	}
	if _, err := os.Stat(dir + "/ran"); err != nil {
		t.Fatal("the child did not run")
	}
}

// TestChildExitsAsTheShutdownArrives races the child's own exit against
// the shutdown signal: whatever wins, lfinit exits promptly with the
// child's code and never signals a reaped pid.
func TestChildExitsAsTheShutdownArrives(t *testing.T) {
	long(t)
	t.Parallel()
	for i := 0; i < scale(20, 6); i++ {
		after := time.Duration(50+i*3) * time.Millisecond
		r := startPID1(t, "--exit-map", "143=0", "HELPER", "-exit", "0", "-after", after.String(), "-ready-file", "DIR/ready")
		r.waitFile("ready")
		r.lfinitPid()
		time.Sleep(after - 5*time.Millisecond)
		r.trySignal(syscall.SIGTERM) // lfinit may be gone already: that is the race
		if got := r.wait(5 * time.Second); got != 0 {
			t.Fatalf("run %d: exit %d, want 0", i, got)
		}
		if strings.Contains(r.stderr.String(), "cannot forward") {
			t.Fatalf("run %d: a forward failed:\n%s", i, r.stderr.String())
		}
	}
}

// TestShutdownDuringStartup sends SIGTERM the instant lfinit has caught
// it, while it is still starting its child (between fork and exec, or
// just before): the signal is held and forwarded once the child runs.
func TestShutdownDuringStartup(t *testing.T) {
	long(t)
	t.Parallel()
	needRoot(t)
	for i := 0; i < scale(30, 10); i++ {
		for _, pid1 := range []bool{true, false} {
			r := start(t, pid1, []string{"--grace", "3s", "--", "sleep", "30"})
			pid := r.lfinitPid()
			// The moment lfinit has forked (its child may not have exec'd
			// yet): lfinit catches signals long before that.
			waitFor(t, 5*time.Second, "lfinit forked", func() bool { return len(childrenOf(pid)) > 0 })
			r.signal(syscall.SIGTERM)
			if code := r.wait(10 * time.Second); code != 143 {
				t.Fatalf("run %d pid1=%v: exit %d, want 143 (the child got the TERM)\n%s", i, pid1, code, r.stderr.String())
			}
		}
	}
}

func TestDescriptorCountStaysFlat(t *testing.T) {
	long(t)
	t.Parallel()
	r := startSubreaper(t, "--metrics-addr", "127.0.0.1:0", "--status-file", "DIR/status.json", "HELPER", "-ready-file", "DIR/ready")
	addr := r.metricsAddr()
	r.waitFile("ready")
	pid := r.lfinitPid()
	count := func() int {
		entries, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		return len(entries)
	}
	before := count()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i := 0; i < scale(1000, 300); i++ {
		resp, err := client.Get("http://" + addr + []string{"/metrics", "/readyz", "/livez", "/nope"}[i%4])
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if i%100 == 0 {
			r.signal(syscall.SIGUSR1) // relays, reaps nothing, must leak nothing
		}
	}
	waitFor(t, 5*time.Second, "descriptors back to the start", func() bool { return count() <= before+1 })
	r.signal(syscall.SIGTERM)
	r.wait(10 * time.Second)
}

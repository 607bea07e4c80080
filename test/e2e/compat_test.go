package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The spellings of tini, dumb-init and catatonit, run for real: an image
// whose init binary is swapped for lfinit keeps its ENTRYPOINT.

func TestPeerGroupForwarding(t *testing.T) {
	long(t)
	t.Parallel()
	for _, tc := range []struct {
		args []string
		env  []string
	}{
		{[]string{"-g", "--"}, nil},                                   // tini -g, catatonit -g
		{[]string{"-sg", "--"}, nil},                                  // a getopt cluster
		{nil, []string{"TINI_KILL_PROCESS_GROUP=1"}},                  // tini's variable
		{[]string{"--"}, []string{"DUMB_INIT_SETSID=1"}},              // dumb-init's setsid mode
		{[]string{"-c", "--"}, []string{"TINI_KILL_PROCESS_GROUP=1"}}, // a flag wins: child only
	} {
		args := append(append([]string{}, tc.args...), "HELPER", "-record", "DIR/rec", "-children", "2", "-ready-file", "DIR/ready")
		r := startWith(t, true, args, tc.env)
		r.waitFile("ready")
		r.signal(syscall.SIGUSR2)
		recorded(t, r.path("rec"), "signal", int(syscall.SIGUSR2))
		childOnly := slices.Contains(tc.args, "-c")
		if !childOnly {
			waitFor(t, 5*time.Second, fmt.Sprintf("%v %v: both grandchildren got USR2", tc.args, tc.env), func() bool {
				return len(signals(readRecord(t, r.path("rec")), "child-signal")) == 2
			})
		}
		r.signal(syscall.SIGTERM)
		if got := r.wait(10 * time.Second); got != 143 {
			t.Fatalf("%v %v: exit %d, want 143", tc.args, tc.env, got)
		}
		if childOnly {
			grandchildrenGotOnlyTheirTerm(t, r.path("rec"), fmt.Sprintf("%v %v (-c is child forwarding)", tc.args, tc.env))
		}
	}
}

func TestTiniExitCodeRemap(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-e", "143"}, {"-se143"}} {
		r := startPID1(t, append(args, "--", "HELPER", "-ready-file", "DIR/ready")...)
		r.waitFile("ready")
		r.signal(syscall.SIGTERM)
		if got := r.wait(10 * time.Second); got != 0 {
			t.Fatalf("%v: TERM, child dies by it (143): lfinit exited %d, want 0", args, got)
		}
	}
}

func TestRewriteTermToQuit(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--rewrite", "TERM:QUIT", "HELPER", "-record", "DIR/rec", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 131 {
		t.Fatalf("exit %d, want 131 (the child died by QUIT)", got)
	}
	if got := signals(readRecord(t, r.path("rec")), "signal"); !slices.Equal(got, []int{3}) {
		t.Fatalf("child got %v, want only QUIT", got)
	}
	if !strings.Contains(r.stderr.String(), "outcome=graceful") {
		t.Fatalf("a rewritten TERM must still be a shutdown:\n%s", r.stderr.String())
	}
}

func TestRewrittenShutdownIsStillBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a deadline")
	}
	t.Parallel()
	r := startPID1(t, "-r", "15:3", "--grace", "800ms", "--floor", "400ms", "HELPER", "-record", "DIR/rec", "-die-on", "", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	sent := time.Now()
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 1 {
		t.Fatalf("exit %d, want 1 (deadline exceeded)", got)
	}
	between(t, "TERM to exit", time.Since(sent), 1100*time.Millisecond, 4*time.Second)
	if got := signals(readRecord(t, r.path("rec")), "signal"); !slices.Equal(got, []int{3, 3}) {
		t.Fatalf("child got %v, want QUIT (stop) and QUIT (deadline)", got)
	}
}

func TestRewriteToZeroDropsTheSignal(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-r", "2:0"}, {"--rewrite", "INT:0"}} {
		r := startPID1(t, append(args, "--metrics-addr", "127.0.0.1:0", "HELPER", "-record", "DIR/rec", "-ready-file", "DIR/ready")...)
		addr := r.metricsAddr()
		r.waitFile("ready")
		r.signal(syscall.SIGINT)
		r.signal(syscall.SIGUSR1)
		// USR1 (10), sent after INT (2), is the barrier: pending signals
		// are taken lowest number first, by the kernel and by the Go
		// runtime, in lfinit and in the helper alike, so an INT that
		// lfinit relayed would be recorded before USR1, and its log
		// lines (written in order) come before USR1's relay line.
		recorded(t, r.path("rec"), "signal", int(syscall.SIGUSR1))
		r.waitLog("signal=SIGUSR1 action=relay")
		if got := signals(readRecord(t, r.path("rec")), "signal"); !slices.Equal(got, []int{10}) {
			t.Fatalf("%v: child got %v, want only USR1 (INT dropped)", args, got)
		}
		if code, _ := get(t, "http://"+addr+"/readyz"); code != 200 {
			t.Fatalf("%v: /readyz %d after a dropped INT, want 200", args, code)
		}
		if log := r.stderr.String(); strings.Contains(log, "phase=draining") || !strings.Contains(log, `signal=SIGINT action="dropped: --rewrite"`) {
			t.Fatalf("%v: a dropped INT must change nothing and be logged as dropped:\n%s", args, log)
		}
		r.signal(syscall.SIGTERM)
		if got := r.wait(10 * time.Second); got != 143 {
			t.Fatalf("%v: exit %d, want 143", args, got)
		}
	}
}

func TestRewriteToAShutdownSignalIsOnlyRelayed(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--rewrite", "HUP:TERM", "HELPER", "-record", "DIR/rec", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	r.signal(syscall.SIGHUP)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d, want 143 (the child died by the relayed TERM)", got)
	}
	if got := signals(readRecord(t, r.path("rec")), "signal"); !slices.Equal(got, []int{15}) {
		t.Fatalf("child got %v, want TERM", got)
	}
	if log := r.stderr.String(); !strings.Contains(log, "outcome=child-exited") {
		t.Fatalf("HUP:TERM must not start a shutdown:\n%s", log)
	}
}

// TestParentDeathSignal: lfinit -p TERM, started by a shell that is then
// killed, starts its bounded shutdown; without -p it goes on running.
func TestParentDeathSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills parents")
	}
	t.Parallel()
	needRoot(t)
	for _, pdeath := range []bool{true, false} {
		dir := t.TempDir()
		flag := ""
		if pdeath {
			flag = "-p TERM"
		}
		script := fmt.Sprintf("%s %s -- %s -record %s/rec -ready-file %s/ready 2>%s/log & echo $! >%s/lfinit.pid; wait",
			lfinitBin, flag, helperBin, dir, dir, dir, dir)
		sh := exec.Command("sh", "-c", script)
		if err := sh.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "the helper is ready", func() bool {
			_, err := os.Stat(dir + "/ready")
			return err == nil
		})
		lf := readPid(t, dir+"/lfinit.pid")
		fd, err := unix.PidfdOpen(lf, 0) // signals reach this lfinit or nothing
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.PidfdSendSignal(fd, syscall.SIGKILL, nil, 0); unix.Close(fd) })
		sh.Process.Kill()
		sh.Wait()
		if !pdeath {
			// The kernel sends a parent-death signal as the parent exits,
			// before it can be reaped: had lfinit one, it would be pending
			// now. WINCH (28) is the barrier: it is taken after any TERM
			// (15), so once the helper records it, lfinit relayed whatever
			// came before, and a shutdown would have relayed TERM first.
			unix.PidfdSendSignal(fd, syscall.SIGWINCH, nil, 0)
			recorded(t, dir+"/rec", "signal", int(syscall.SIGWINCH))
			if got := signals(readRecord(t, dir+"/rec"), "signal"); !slices.Equal(got, []int{int(syscall.SIGWINCH)}) {
				t.Fatalf("without -p, the helper got %v after lfinit's parent died, want only the WINCH sent", got)
			}
			if !alive(lf) {
				t.Fatal("without -p, lfinit ended with its parent")
			}
			unix.PidfdSendSignal(fd, syscall.SIGTERM, nil, 0)
			waitFor(t, 10*time.Second, "lfinit exits after TERM", func() bool { return !alive(lf) })
			continue
		}
		recorded(t, dir+"/rec", "signal", int(syscall.SIGTERM))
		waitFor(t, 10*time.Second, "lfinit exits once its parent died", func() bool { return !alive(lf) })
		log, _ := os.ReadFile(dir + "/log")
		if !strings.Contains(string(log), "signal=SIGTERM") || !strings.Contains(string(log), "outcome=graceful") {
			t.Fatalf("want a graceful shutdown on the parent-death TERM:\n%s", log)
		}
	}
}

func TestWarnOnReap(t *testing.T) {
	long(t)
	t.Parallel()
	const msg = `level=WARN msg="reaped a process that is not the child"`
	for _, tc := range []struct {
		pid1 bool
		flag string
	}{{true, "-w"}, {false, "--warn-on-reap"}, {true, ""}} {
		args := []string{"HELPER", "-pidfile", "DIR/child.pid", "-orphans", "3", "-exit", "0", "-after", "300ms"}
		if tc.flag != "" {
			args = append([]string{tc.flag}, args...)
		}
		r := start(t, tc.pid1, args)
		if got := r.wait(10 * time.Second); got != 0 {
			t.Fatalf("%+v: exit %d", tc, got)
		}
		log := r.stderr.String()
		n := strings.Count(log, msg)
		switch {
		case tc.flag == "" && n != 0:
			t.Fatalf("without -w: %d warnings", n)
		case tc.flag != "" && n < 3:
			t.Fatalf("%+v: %d warnings, want one per orphan (3):\n%s", tc, n, log)
		}
		child := fmt.Sprintf("pid=%d ", readPid(t, r.path("child.pid")))
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, msg) && strings.Contains(line, child) {
				t.Fatalf("%+v: the child itself was warned about: %s", tc, line)
			}
		}
	}
}

func TestTiniVerbosityZeroIsSilent(t *testing.T) {
	t.Parallel()
	r := startWith(t, true, []string{"HELPER", "-exit", "0"}, []string{"TINI_VERBOSITY=0"})
	if got := r.wait(10 * time.Second); got != 0 {
		t.Fatalf("exit %d", got)
	}
	if log := r.stderr.String(); log != "" {
		t.Fatalf("TINI_VERBOSITY=0 (errors only) printed:\n%s", log)
	}
}

func TestPeerRefusalsExit2BeforeTheChildStarts(t *testing.T) {
	t.Parallel()
	needRoot(t)
	marker := t.TempDir() + "/started"
	for _, tc := range []struct {
		env  []string
		args []string
		msg  string
	}{
		{nil, []string{"-P"}, "lfinit needs a command"},
		{nil, []string{"-e", "300"}, "--exit-map CODE=0"},
		{nil, []string{"-r", "15"}, "FROM:TO"},
		{nil, []string{"-p", "NOPE"}, "unknown signal"},
		{[]string{"DUMB_INIT_SETSID=yes"}, nil, "LFINIT_FORWARD_TO"},
		{[]string{"TINI_VERBOSITY=loud"}, nil, "LFINIT_LOG_LEVEL"},
	} {
		if line := refused(t, tc.env, append(tc.args, "--"), marker); !strings.Contains(line, tc.msg) {
			t.Errorf("%v %v: want the line to name %q, got: %s", tc.env, tc.args, tc.msg, line)
		}
	}
	out, err := exec.Command(lfinitBin, "-l").Output()
	if err != nil || !strings.Contains(string(out), "Apache") {
		t.Errorf("-l: %v %s", err, out)
	}
}

package container

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helperArgs is the helper's command line in the base image: it records
// what happens to it in /rec/record and says it is set up in /rec/ready.
func helperArgs(extra ...string) []string {
	return append([]string{"--", "/helper", "-record", "/rec/record", "-ready-file", "/rec/ready"}, extra...)
}

// lfinitArgs puts lfinit options before the helper's command line.
func lfinitArgs(opts []string, helper ...string) []string {
	return append(append([]string{}, opts...), helperArgs(helper...)...)
}

// checkExit checks lfinit's final log line and podman's exit code.
func checkExit(t *testing.T, c *ctr, outcome string, code int) logLine {
	t.Helper()
	if got := c.exitCode(); got != code {
		t.Errorf("podman inspect: exit code %d, want %d", got, code)
	}
	l := c.exitLine()
	if l.str("outcome") != outcome || int(l.num("exit_code")) != code {
		t.Errorf("lfinit logged outcome=%s exit_code=%v, want %s and %d", l.str("outcome"), l["exit_code"], outcome, code)
	}
	return l
}

// engineTimeout is the stop timeout these tests give podman (stop -t 10):
// the container must be gone before the engine's own SIGKILL.
const engineTimeout = 10 * time.Second

// TestNoLoadStop: a plain podman stop of an idle service is over at once.
// The helper dies by SIGTERM, as an unmodified service usually does, so
// lfinit honestly reports 143 unless told with --exit-map 143=0 that this
// is how the service says "clean stop"; both are checked. The exit line
// names who sent the stop.
func TestNoLoadStop(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []string
		code int
	}{
		{"exit-map 143=0", []string{"--exit-map", "143=0"}, 0},
		{"no exit-map", nil, 143},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := run(t, baseImage, nil, lfinitArgs(tc.opts)...)
			c.waitFile("ready")
			took := c.stop(10)
			l := checkExit(t, c, "graceful", tc.code)
			shutdown := l.dur(t, "shutdown_duration")
			t.Logf("timing: no-load stop (%s): %v, lfinit shutdown %v, exit %d", tc.name, took, shutdown, tc.code)
			// lfinit's own part is bounded; podman's delivery of the signal
			// is the machine's (over a second beside other builds), and
			// only has to beat its own stop timeout.
			between(t, "shutdown_duration", shutdown, 0, 200*time.Millisecond)
			between(t, "stop to exit", took.exited, 0, engineTimeout)
			if !c.recorded("signal 15 ") {
				t.Errorf("the helper never got SIGTERM")
			}
			// podman's TERM comes from outside the container's PID namespace.
			if got := l.str("signal_sender"); got != "outside-pid-namespace" {
				t.Errorf("signal_sender=%q, want outside-pid-namespace", got)
			}
		})
	}
}

// TestInFlightWorkFinishes: work that takes 1.5s after SIGTERM finishes
// inside the (default 8s) grace, and the stop is graceful, exit 0.
func TestInFlightWorkFinishes(t *testing.T) {
	const work = 1500 * time.Millisecond
	c := run(t, baseImage, nil, lfinitArgs([]string{"--exit-map", "143=0"}, "-die-delay", work.String())...)
	c.waitFile("ready")
	took := c.stop(10)
	l := checkExit(t, c, "graceful", 0)
	shutdown := l.dur(t, "shutdown_duration")
	t.Logf("timing: in-flight work %v: %v, lfinit shutdown %v, exit 0", work, took, shutdown)
	between(t, "shutdown_duration", shutdown, work, work+500*time.Millisecond)
	between(t, "stop to exit", took.exited, work, engineTimeout)
}

// TestIgnoredTermMeetsDeadline: a child that ignores SIGTERM, --grace=2s,
// podman stop -t 10: lfinit kills it at the hard deadline (2.25s) and exits
// 1 — not the engine's 137, which would come only at 10s.
func TestIgnoredTermMeetsDeadline(t *testing.T) {
	c := run(t, baseImage, nil, lfinitArgs([]string{"--grace=2s"}, "-ignore", "15")...)
	c.waitFile("ready")
	took := c.stop(10)
	l := checkExit(t, c, "deadline-exceeded", 1)
	shutdown := l.dur(t, "shutdown_duration")
	t.Logf("timing: SIGTERM ignored, --grace=2s, podman stop -t 10: %v, lfinit shutdown %v, exit 1", took, shutdown)
	between(t, "shutdown_duration", shutdown, 2250*time.Millisecond, 2450*time.Millisecond)
	between(t, "stop to exit", took.exited, 2250*time.Millisecond, engineTimeout)
	lines := c.lfinitLog()
	if _, ok := find(lines, "deadline signal sent", "signal", "SIGTERM"); !ok {
		t.Errorf("no deadline signal logged at the grace deadline")
	}
	if k, ok := find(lines, "hard deadline: killed the process tree"); !ok || k.num("killed") < 1 {
		t.Errorf("no SIGKILL at the hard deadline logged (%v)", k)
	}
	if l.num("killed") < 1 {
		t.Errorf("exit line says killed=%v, want at least 1", l["killed"])
	}
}

// TestGraceBeyondEngineTimeout: with lfinit's grace (30s) longer than the
// engine's stop timeout (2s) the engine SIGKILLs lfinit first: exit 137.
// (30s, so that podman's kill, seconds late on a crowded machine, still
// comes first.)
// lfinit budget, run in the container with the same environment, warns
// about exactly that beforehand, and --stop-timeout turns it into a
// refusal to start.
func TestGraceBeyondEngineTimeout(t *testing.T) {
	t.Run("engine kills first", func(t *testing.T) {
		c := run(t, baseImage, []string{"--env", "LFINIT_GRACE=30s"}, helperArgs("-ignore", "15")...)
		c.waitFile("ready")
		out, err := podmanCmd(time.Minute, "exec", c.name, "/lfinit", "budget", "--stop-timeout", "2s")
		if err == nil || !strings.Contains(out, "TOO SHORT") || !strings.Contains(out, "exit 137") {
			t.Errorf("lfinit budget --stop-timeout 2s with LFINIT_GRACE=30s: err=%v, want exit 1 and a warning; output:\n%s", err, out)
		}
		t.Logf("lfinit budget warned:\n%s", out)
		took := c.stop(2)
		if got := c.exitCode(); got != 137 {
			t.Errorf("exit code %d, want the engine's 137", got)
		}
		if _, ok := find(c.lfinitLog(), "exit"); ok {
			t.Errorf("lfinit logged an exit, but the engine should have killed it first")
		}
		t.Logf("timing: --grace=30s, podman stop -t 2: %v, exit 137", took)
		// The engine's kill at its 2 s, whenever podman gets to it, as long
		// as it comes before lfinit's own grace deadline.
		between(t, "stop to exit", took.exited, 2*time.Second, 30*time.Second)
	})
	t.Run("stop-timeout refuses to start", func(t *testing.T) {
		c := run(t, baseImage, []string{"--env", "LFINIT_GRACE=5s", "--env", "LFINIT_STOP_TIMEOUT=2s"}, helperArgs()...)
		waitFor(t, 15*time.Second, "the container to exit", func() bool {
			out, _ := podmanCmd(time.Minute, "inspect", "--format", "{{.State.Status}}", c.name)
			return out == "exited" || out == "stopped"
		})
		if got := c.exitCode(); got != 2 {
			t.Errorf("exit code %d, want 2 (usage: the budget does not fit --stop-timeout)", got)
		}
		if _, err := os.Stat(c.path("record")); err == nil {
			t.Errorf("the helper was started, but lfinit should refuse before starting anything")
		}
		logs := podman(t, "logs", c.name)
		if !strings.Contains(logs, "does not fit --stop-timeout 2s") {
			t.Errorf("lfinit's refusal does not say the budget does not fit the stop timeout:\n%s", logs)
		}
	})
}

// TestZombiesReaped: the helper leaves 50 orphans (half already dead, half
// dying 200ms later) to PID 1; inside the container lfinit reaps them all,
// and none is left as a zombie.
func TestZombiesReaped(t *testing.T) {
	const orphans = 50
	c := run(t, baseImage, nil, lfinitArgs([]string{"--exit-map", "143=0"}, "-orphans", strconv.Itoa(orphans))...)
	c.waitFile("ready")
	c.waitRecord("orphans-done ")
	pid := strings.TrimSpace(podman(t, "inspect", "--format", "{{.State.Pid}}", c.name))
	init, err := strconv.Atoi(pid)
	if err != nil || init <= 1 {
		t.Fatalf("container pid %q", pid)
	}
	// Only lfinit and the helper remain once the sleepers have ended and
	// been reaped: no zombie, nothing else.
	var left []proc
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		left = namespaceProcs(t, init)
		if len(left) == 2 && left[0].state != 'Z' && left[1].state != 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphans not reaped after 10s; processes in the container: %v", left)
		}
	}
	c.stop(10)
	l := checkExit(t, c, "graceful", 0)
	// The orphans, plus the helper itself at the stop.
	if got := int(l.num("reaped")); got != orphans+1 {
		t.Errorf("lfinit reaped %d processes, want %d (%d orphans and the helper)", got, orphans+1, orphans)
	}
}

// proc is a process seen in /proc.
type proc struct {
	pid   int
	state byte
	comm  string
}

// namespaceProcs lists the processes in the PID namespace of pid, from the host.
func namespaceProcs(t *testing.T, pid int) []proc {
	t.Helper()
	ns, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var ps []proc
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if other, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns/pid")); err != nil || other != ns {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) S …: comm may hold spaces and parentheses, so split at the last ')'.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			continue
		}
		ps = append(ps, proc{pid: p, state: s[i+2], comm: s[strings.IndexByte(s, '(')+1 : i]})
	}
	return ps
}

// TestKillSignalReachesChild: podman kill --signal sends to PID 1, and
// lfinit relays it to the child without starting a shutdown. A signal the
// child dies of (HUP, for a daemon that cannot reload) ends the container
// with the child's own code.
func TestKillSignalReachesChild(t *testing.T) {
	c := run(t, baseImage, nil, lfinitArgs(nil)...)
	c.waitFile("ready")
	podman(t, "kill", "--signal", "USR1", c.name)
	c.waitRecord("signal 10 ")
	if _, ok := find(c.lfinitLog(), "signal received", "signal", "SIGUSR1", "action", "relay"); !ok {
		t.Errorf("lfinit did not log relaying SIGUSR1")
	}
	podman(t, "kill", "--signal", "HUP", c.name)
	c.waitRecord("signal 1 ")
	waitFor(t, 15*time.Second, "the container to exit", func() bool {
		out, _ := podmanCmd(time.Minute, "inspect", "--format", "{{.State.Status}}", c.name)
		return out == "exited" || out == "stopped"
	})
	checkExit(t, c, "child-exited", 129)
}

// TestStopSignal: a service that wants SIGQUIT to stop gracefully (nginx,
// for one). Either lfinit rewrites the engine's SIGTERM (--stop-signal),
// or the image says STOPSIGNAL SIGQUIT and QUIT is made a shutdown signal;
// without that, QUIT is merely relayed and the stop is not a bounded
// shutdown — also checked, as the reason for the second form.
func TestStopSignal(t *testing.T) {
	quitImage := "localhost/lfinit-qualification:stopsignal-quit"
	// The helper dies on SIGQUIT only: SIGTERM would be ignored.
	quitOnly := []string{"-die-on", "3"}
	t.Run("--stop-signal QUIT", func(t *testing.T) {
		c := run(t, baseImage, nil, lfinitArgs([]string{"--stop-signal", "QUIT", "--exit-map", "131=0"}, quitOnly...)...)
		c.waitFile("ready")
		took := c.stop(10)
		checkExit(t, c, "graceful", 0)
		if !c.recorded("signal 3 ") || c.recorded("signal 15 ") {
			t.Errorf("the helper should get SIGQUIT and never SIGTERM")
		}
		if _, ok := find(c.lfinitLog(), "stop signal sent", "signal", "SIGQUIT"); !ok {
			t.Errorf("lfinit did not log sending SIGQUIT as the stop signal")
		}
		t.Logf("timing: --stop-signal QUIT: %v, exit 0", took)
	})
	t.Run("STOPSIGNAL SIGQUIT", func(t *testing.T) {
		needPodman(t)
		if err := buildImage(t.TempDir(), quitImage, "FROM "+baseImage+"\nSTOPSIGNAL SIGQUIT\n", nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { podmanCmd(time.Minute, "rmi", "--force", quitImage) })
		if got := podman(t, "image", "inspect", "--format", "{{.Config.StopSignal}}", quitImage); got != "SIGQUIT" {
			t.Errorf("image StopSignal %q, want SIGQUIT", got)
		}
		for _, tc := range []struct {
			name    string
			opts    []string
			outcome string
			code    int
		}{
			{"QUIT is a shutdown signal", []string{"--shutdown-signals", "TERM,INT,QUIT", "--exit-map", "131=0"}, "graceful", 0},
			{"QUIT only relayed", nil, "child-exited", 131},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := run(t, quitImage, nil, lfinitArgs(tc.opts, quitOnly...)...)
				c.waitFile("ready")
				c.stop(10)
				checkExit(t, c, tc.outcome, tc.code)
				action := "shutdown"
				if tc.outcome == "child-exited" {
					action = "relay"
				}
				if _, ok := find(c.lfinitLog(), "signal received", "signal", "SIGQUIT", "action", action); !ok {
					t.Errorf("lfinit did not log SIGQUIT with action=%s", action)
				}
				if !c.recorded("signal 3 ") || c.recorded("signal 15 ") {
					t.Errorf("the helper should get SIGQUIT and never SIGTERM")
				}
			})
		}
	})
}

package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/statusfile"
)

// Services that daemonize: the start command double-forks (helper ->
// intermediate -> setsid daemon), exits 0, and the daemon writes its own
// pidfile a little later, as an init.d-style service does.

// daemonPid is the daemon's pid as its record says (its own namespace's view).
func daemonPid(t *testing.T, rec string) int {
	t.Helper()
	for _, e := range readRecord(t, rec) {
		if e.kind == "daemon-start" {
			for _, f := range strings.Fields(e.line) {
				if v, ok := strings.CutPrefix(f, "pid="); ok {
					pid, _ := strconv.Atoi(v)
					return pid
				}
			}
		}
	}
	t.Fatalf("no daemon-start in %s", rec)
	return 0
}

// startCommandExited waits until the record says the start command exited.
func startCommandExited(t *testing.T, rec string) {
	t.Helper()
	waitFor(t, 10*time.Second, "the start command's exit", func() bool {
		b, _ := os.ReadFile(rec)
		return strings.Contains(string(b), "\nexit 0 ") || strings.HasPrefix(string(b), "exit 0 ")
	})
}

func TestPidfileDaemonIsFollowedAndStoppedGracefully(t *testing.T) {
	long(t)
	t.Parallel()
	for _, pid1 := range []bool{true, false} {
		t.Run(fmt.Sprintf("pid1=%v", pid1), func(t *testing.T) {
			t.Parallel()
			r := start(t, pid1, []string{"--pidfile", "DIR/daemon.pid", "--status-file", "DIR/status.json", "--grace", "5s",
				"HELPER", "-record", "DIR/rec", "-daemon", "DIR/daemon.pid", "-daemon-pidfile-delay", "1s", "-daemon-term-exit", "7", "-exit", "0"})
			startCommandExited(t, r.path("rec"))
			// The daemon writes its pidfile a second after it started: until
			// then lfinit waits, in starting, not ready.
			if s := readStatus(t, r.path("status.json")); s.Phase != statusfile.Starting || s.Ready {
				t.Fatalf("while the pidfile is awaited: phase %q ready %v", s.Phase, s.Ready)
			}
			s := waitPhase(t, r.path("status.json"), statusfile.Ready)
			daemon := daemonPid(t, r.path("rec"))
			if s.ChildPid == nil || *s.ChildPid != daemon {
				t.Fatalf("status child_pid %v, want the daemon %d", s.ChildPid, daemon)
			}
			r.signal(syscall.SIGHUP)
			recorded(t, r.path("rec"), "daemon-signal", int(syscall.SIGHUP))
			r.signal(syscall.SIGTERM)
			if got := r.wait(10 * time.Second); got != 7 {
				t.Fatalf("exit %d, want the daemon's 7", got)
			}
			s = readStatus(t, r.path("status.json"))
			if s.Outcome == nil || *s.Outcome != statusfile.Graceful || *s.ExitCode != 7 {
				t.Fatalf("final status %+v", s)
			}
			if !pid1 && alive(daemon) {
				t.Fatalf("daemon %d outlived lfinit", daemon)
			}
		})
	}
}

func TestPidfileDaemonThatIgnoresTermIsKilledAtTheHardDeadline(t *testing.T) {
	long(t)
	t.Parallel()
	for _, pid1 := range []bool{true, false} {
		t.Run(fmt.Sprintf("pid1=%v", pid1), func(t *testing.T) {
			t.Parallel()
			r := start(t, pid1, []string{"--pidfile", "DIR/daemon.pid", "--status-file", "DIR/status.json", "--grace", "500ms", "--floor", "300ms",
				"HELPER", "-record", "DIR/rec", "-daemon", "DIR/daemon.pid", "-daemon-ignore-term", "-exit", "0"})
			waitPhase(t, r.path("status.json"), statusfile.Ready)
			daemon := daemonPid(t, r.path("rec"))
			begun := time.Now()
			r.signal(syscall.SIGTERM)
			if got := r.wait(10 * time.Second); got != 1 {
				t.Fatalf("exit %d, want 1", got)
			}
			between(t, "the forced stop", time.Since(begun), 700*time.Millisecond, 5*time.Second)
			if s := readStatus(t, r.path("status.json")); s.Outcome == nil || *s.Outcome != statusfile.DeadlineExceeded {
				t.Fatalf("final status %+v", s)
			}
			if !pid1 && alive(daemon) {
				t.Fatalf("daemon %d outlived lfinit", daemon)
			}
		})
	}
}

func TestPidfileThatNeverAppearsFailsAndCleansUp(t *testing.T) {
	t.Parallel()
	for _, pid1 := range []bool{true, false} {
		t.Run(fmt.Sprintf("pid1=%v", pid1), func(t *testing.T) {
			t.Parallel()
			r := start(t, pid1, []string{"--pidfile", "DIR/never.pid", "--pidfile-timeout", "500ms", "--status-file", "DIR/status.json",
				"--termination-log", "DIR/termlog", "HELPER", "-record", "DIR/rec", "-daemon", "DIR/daemon.pid", "-exit", "0"})
			if got := r.wait(10 * time.Second); got != 1 {
				t.Fatalf("exit %d, want 1", got)
			}
			log := r.stderr.String()
			if !strings.Contains(log, "level=ERROR") || !strings.Contains(log, r.path("never.pid")) || !strings.Contains(log, "does not exist") {
				t.Fatalf("no ERROR naming the pidfile and the problem:\n%s", log)
			}
			s := readStatus(t, r.path("status.json"))
			if s.Outcome == nil || *s.Outcome != statusfile.Failed || *s.ExitCode != 1 {
				t.Fatalf("final status %+v", s)
			}
			if b, _ := os.ReadFile(r.path("termlog")); !strings.Contains(string(b), "outcome=failed") {
				t.Fatalf("termination message %q", b)
			}
			// The daemon that did start was cleaned up.
			recorded(t, r.path("rec"), "daemon-signal", int(syscall.SIGTERM))
			if d := readPid(t, r.path("daemon.pid")); !pid1 && alive(d) {
				t.Fatalf("daemon %d outlived lfinit", d)
			}
		})
	}
}

func TestPidfileNamingAStrangerIsRefused(t *testing.T) {
	long(t)
	t.Parallel()
	needRoot(t)
	dir := t.TempDir()
	stranger := exec.Command(helperBin, "-record", filepath.Join(dir, "stranger.rec"), "-die-on", "", "-ready-file", filepath.Join(dir, "stranger.ready"))
	if err := stranger.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stranger.Process.Kill(); stranger.Wait() }()
	waitFor(t, 5*time.Second, "stranger ready", func() bool { _, err := os.Stat(filepath.Join(dir, "stranger.ready")); return err == nil })
	pidfile := filepath.Join(dir, "stranger.pid")
	if err := os.WriteFile(pidfile, []byte(strconv.Itoa(stranger.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startSubreaper(t, "--pidfile", pidfile, "--pidfile-timeout", "1s", "--forward-to", "group", "HELPER", "-record", "DIR/rec", "-children", "1", "-exit", "0")
	startCommandExited(t, r.path("rec"))
	r.trySignal(syscall.SIGHUP) // while waiting: relayed to lfinit's tree only
	if got := r.wait(10 * time.Second); got != 1 {
		t.Fatalf("exit %d, want 1", got)
	}
	if log := r.stderr.String(); !strings.Contains(log, "not in lfinit's tree") || !strings.Contains(log, pidfile) {
		t.Fatalf("no refusal naming the pidfile:\n%s", log)
	}
	if !alive(stranger.Process.Pid) {
		t.Fatal("the stranger was killed")
	}
	if got := signals(readRecord(t, filepath.Join(dir, "stranger.rec")), "signal"); len(got) != 0 {
		t.Fatalf("the stranger outside lfinit's tree received %v", got)
	}
}

func TestWaitForTreeStaysWhileADaemonLives(t *testing.T) {
	t.Parallel()
	for _, pid1 := range []bool{true, false} {
		t.Run(fmt.Sprintf("pid1=%v", pid1), func(t *testing.T) {
			t.Parallel()
			r := start(t, pid1, []string{"--wait-for=tree", "--status-file", "DIR/status.json",
				"HELPER", "-record", "DIR/rec", "-daemon", "DIR/daemon.pid", "-daemon-term-exit", "9", "-exit", "0"})
			startCommandExited(t, r.path("rec"))
			// Once lfinit has logged the start command's exit, it has
			// decided: it stays, or it would go on to clean up and exit.
			// The relay to the daemon below proves it stayed.
			r.waitLog(`msg="child exited"`)
			select {
			case <-r.done:
				t.Fatalf("lfinit exited %d with the daemon alive", r.code)
			default:
			}
			// The status file is written beside the loop: wait for the
			// phase rather than read it at one instant.
			waitPhase(t, r.path("status.json"), statusfile.Ready)
			select {
			case <-r.done:
				t.Fatalf("lfinit exited %d with the daemon alive", r.code)
			default:
			}
			r.signal(syscall.SIGUSR1)
			recorded(t, r.path("rec"), "daemon-signal", int(syscall.SIGUSR1))
			r.signal(syscall.SIGTERM)
			if got := r.wait(10 * time.Second); got != 9 {
				t.Fatalf("exit %d, want the daemon's 9", got)
			}
			if s := readStatus(t, r.path("status.json")); s.Outcome == nil || *s.Outcome != statusfile.Graceful {
				t.Fatalf("final status %+v", s)
			}
		})
	}
}

func TestWaitForTreeEndsWhenTheLastProcessDoes(t *testing.T) {
	long(t)
	t.Parallel()
	r := startPID1(t, "--wait-for=tree", "/bin/sh", "-c", "(sleep 1; exit 4) & exit 0")
	if got := r.wait(10 * time.Second); got != 4 {
		t.Fatalf("exit %d, want the last process's 4", got)
	}
	between(t, "the run", r.took, 900*time.Millisecond, 8*time.Second)
}

func TestWaitForTreeKillsAStubbornTreeAtTheHardDeadline(t *testing.T) {
	long(t)
	t.Parallel()
	r := startSubreaper(t, "--wait-for=tree", "--grace", "500ms", "--floor", "300ms",
		"HELPER", "-record", "DIR/rec", "-daemon", "DIR/daemon.pid", "-daemon-ignore-term", "-exit", "0")
	startCommandExited(t, r.path("rec"))
	daemon := readPid(t, r.path("daemon.pid"))
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 1 {
		t.Fatalf("exit %d, want 1", got)
	}
	between(t, "the forced stop", r.took, 700*time.Millisecond, 8*time.Second)
	if alive(daemon) {
		t.Fatalf("daemon %d outlived lfinit", daemon)
	}
}

// A real init.d-style start: Debian's start-stop-daemon --background.
func TestStartStopDaemonWithPidfile(t *testing.T) {
	if testing.Short() {
		t.Skip("a real service: not in -short")
	}
	ssd, err := exec.LookPath("start-stop-daemon")
	if err != nil {
		t.Skip("start-stop-daemon is not installed (Debian's dpkg)")
	}
	t.Parallel()
	r := startPID1(t, "--pidfile", "DIR/sleep.pid", "--status-file", "DIR/status.json",
		ssd, "--start", "--background", "--make-pidfile", "--pidfile", "DIR/sleep.pid", "--exec", "/bin/sleep", "--", "1000")
	s := waitPhase(t, r.path("status.json"), statusfile.Ready)
	if s.ChildPid == nil || *s.ChildPid != readPid(t, r.path("sleep.pid")) {
		t.Fatalf("child_pid %v is not the pidfile's", s.ChildPid)
	}
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d, want sleep's 143 (killed by TERM)", got)
	}
}

func TestPidfileWithGarbageIsRefused(t *testing.T) {
	t.Parallel()
	needRoot(t)
	pidfile := filepath.Join(t.TempDir(), "garbage.pid")
	if err := os.WriteFile(pidfile, []byte("not-a-pid\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startSubreaper(t, "--pidfile", pidfile, "--pidfile-timeout", "300ms", "HELPER", "-record", "DIR/rec", "-daemon", "DIR/daemon.pid", "-exit", "0")
	if got := r.wait(10 * time.Second); got != 1 {
		t.Fatalf("exit %d, want 1", got)
	}
	if log := r.stderr.String(); !strings.Contains(log, `does not hold a process id (first line \"not-a-pid\")`) {
		t.Fatalf("no ERROR saying what is wrong with the pidfile:\n%s", log)
	}
	if d := readPid(t, r.path("daemon.pid")); alive(d) {
		t.Fatalf("daemon %d outlived lfinit", d)
	}
}

// With a readiness check, the adopted daemon is ready only once it answers.
func TestPidfileDaemonReadyOnlyOnceItAnswers(t *testing.T) {
	long(t)
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := startPID1(t, "--pidfile", "DIR/daemon.pid", "--ready-http", "http://"+addr+"/", "--status-file", "DIR/status.json",
		"HELPER", "-record", "DIR/rec", "-daemon", "DIR/daemon.pid", "-daemon-listen", addr, "-listen-after", "1500ms", "-exit", "0")
	startCommandExited(t, r.path("rec"))
	daemon := daemonPid(t, r.path("rec"))
	// Adopted (the status names it) but not answering yet: still starting.
	waitFor(t, 5*time.Second, "the daemon adopted", func() bool {
		s := readStatus(t, r.path("status.json"))
		return s.ChildPid != nil && *s.ChildPid == daemon
	})
	b, _ := os.ReadFile(r.path("rec"))
	if s := readStatus(t, r.path("status.json")); !strings.Contains(string(b), "listening ") && (s.Phase != statusfile.Starting || s.Ready) {
		t.Fatalf("adopted but not answering: phase %q ready %v", s.Phase, s.Ready)
	}
	waitPhase(t, r.path("status.json"), statusfile.Ready)
	if b, _ := os.ReadFile(r.path("rec")); !strings.Contains(string(b), "listening ") {
		t.Fatal("ready before the daemon listened")
	}
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d, want the daemon's 143", got)
	}
}

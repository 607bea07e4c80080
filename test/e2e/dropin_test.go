package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
	"github.com/light-fabric/lfinit/statusfile"
)

// The last mile of a drop-in for tini, dumb-init and catatonit: quiet on
// a terminal, lfinit in /, socket activation, inherited descriptors.

// bothModes runs f as PID 1 of a new namespace and as a subreaper.
func bothModes(t *testing.T, f func(t *testing.T, pid1 bool)) {
	for _, pid1 := range []bool{true, false} {
		t.Run(fmt.Sprintf("pid1=%v", pid1), func(t *testing.T) {
			t.Parallel()
			f(t, pid1)
		})
	}
}

// TestQuietOnATerminal: when lfinit gave the terminal to the child, the
// screen after a normal exit holds the child's output only, as under
// tini, dumb-init and catatonit; a deadline stop still warns there.
func TestQuietOnATerminal(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, pid1 bool) {
		lf := "env -u LFINIT_LOG_LEVEL " + lfinitBin
		if pid1 {
			lf = "unshare --pid --fork --mount-proc " + lf
		}
		t.Run("normal", func(t *testing.T) {
			t.Parallel()
			p := newPane(t, lf+" -- sh -c 'echo hi; exit 3'; echo LFINIT-EXIT=$?; sleep 60")
			p.WaitFor("LFINIT-EXIT=3", 1)
			var lines []string
			for _, l := range strings.Split(p.Screen(), "\n") {
				if strings.TrimSpace(l) != "" {
					lines = append(lines, l)
				}
			}
			if strings.Join(lines, "|") != "hi|LFINIT-EXIT=3" {
				t.Fatalf("the screen holds %q, want only the child's hi (and the shell's echo)", lines)
			}
		})
		t.Run("deadline", func(t *testing.T) {
			t.Parallel()
			// The child asks lfinit to stop, then ignores the stop signal.
			p := newPane(t, lf+` --grace 300ms --floor 200ms -- sh -c 'trap "" TERM; kill -TERM $PPID; exec sleep 100'; echo LFINIT-EXIT=$?; sleep 60`)
			p.WaitFor("LFINIT-EXIT=1", 1)
			s := p.Screen()
			for _, want := range []string{`level=WARN msg="deadline signal sent"`, `level=WARN msg=exit`, "outcome=deadline-exceeded"} {
				if !strings.Contains(s, want) {
					t.Errorf("the screen lacks %s", want)
				}
			}
		})
	})
}

// TestTerminalThroughTheExecStep: started through socket activation's
// exec step, the child still gets the terminal's foreground: cat echoes a
// typed line (a background cat would be stopped by SIGTTIN) and exits 0
// on Ctrl-D.
func TestTerminalThroughTheExecStep(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, pid1 bool) {
		cmd := fmt.Sprintf(`sh -c 'LISTEN_PID=$$ LISTEN_FDS=0 exec %s -- cat'`, lfinitBin)
		if pid1 {
			cmd = "unshare --pid --fork --mount-proc " + cmd
		}
		catSession(newPane(t, cmd+"; echo LFINIT-EXIT=$?; sleep 60"))
	})
}

// TestInitLeavesTheStartDirectory: once the child runs, lfinit's cwd is /
// (it pins no mount) and the child's the start directory, where lfinit's
// relative --status-file and --termination-log still land.
func TestInitLeavesTheStartDirectory(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, pid1 bool) {
		r := startLaunch(t, pid1, []string{"--status-file", "status.json", "--termination-log", "term.log", "HELPER", "-ready-file", "ready"}, launch{inDir: true})
		r.waitFile("ready")
		waitPhase(t, r.path("status.json"), statusfile.Ready)
		lf := r.lfinitPid()
		kids := childrenOf(lf)
		if len(kids) != 1 {
			t.Fatalf("lfinit has children %v, want the helper", kids)
		}
		start, _ := filepath.EvalSymlinks(r.dir)
		if cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", lf)); cwd != "/" {
			t.Errorf("lfinit's cwd is %q, want /", cwd)
		}
		if cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", kids[0])); cwd != start {
			t.Errorf("the child's cwd is %q, want the start directory %q", cwd, start)
		}
		r.signal(syscall.SIGTERM)
		r.wait(10 * time.Second)
		if s := readStatus(t, r.path("status.json")); s.Outcome == nil || *s.Outcome != statusfile.Graceful {
			t.Errorf("final status %+v, want graceful", s)
		}
		if b, err := os.ReadFile(r.path("term.log")); err != nil || !strings.Contains(string(b), "graceful") {
			t.Errorf("termination message %q, %v", b, err)
		}
	})
}

// TestRelativePidfileAfterTheMove: a relative --pidfile is read after
// lfinit moved to /, in the start directory where the daemon wrote it.
func TestRelativePidfileAfterTheMove(t *testing.T) {
	t.Parallel()
	r := startLaunch(t, false, []string{"--pidfile", "daemon.pid", "--status-file", "status.json",
		"HELPER", "-record", "rec", "-daemon", "daemon.pid", "-exit", "0"}, launch{inDir: true})
	s := waitPhase(t, r.path("status.json"), statusfile.Ready)
	if daemon := daemonPid(t, r.path("rec")); s.ChildPid == nil || *s.ChildPid != daemon {
		t.Fatalf("status child_pid %v, want the daemon %d", s.ChildPid, daemon)
	}
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 143 {
		t.Fatalf("exit %d, want the daemon's death by TERM, 143", got)
	}
}

// activationLine reads the helper's -activation file.
func activationLine(t *testing.T, path string) map[string]string {
	t.Helper()
	waitFor(t, 10*time.Second, "the activation report", func() bool { _, err := os.Stat(path); return err == nil })
	b, _ := os.ReadFile(path)
	m := map[string]string{}
	for _, f := range strings.Fields(string(b)) {
		k, v, _ := strings.Cut(f, "=")
		m[k] = v
	}
	return m
}

// startActivated starts lfinit with a listening socket on descriptor 3
// and LISTEN_FDS=1, LISTEN_PID set by a shell that then execs lfinit
// ($$, lfinit's own pid, or listenPID), and the helper reporting on it.
func startActivated(t *testing.T, pid1 bool, listenPID string, opts ...string) (*run, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	defer l.Close()
	shell := fmt.Sprintf(`export LISTEN_PID=%s LISTEN_FDS=1 LISTEN_FDNAMES=web; exec "$@"`, listenPID)
	args := append(opts, "HELPER", "-activation", "DIR/activation")
	r := startLaunch(t, pid1, args, launch{wrapper: []string{"sh", "-c", shell, "sh"}, files: []*os.File{f}})
	return r, l.Addr().String()
}

// TestSocketActivation: with LISTEN_PID naming lfinit, the child gets the
// socket on descriptor 3 and LISTEN_PID = its own pid, so it accepts
// connections by sd_listen_fds(3)'s rules; naming another process, the
// variables are left alone and the socket is not passed (unless
// --preserve-fds says so).
func TestSocketActivation(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, pid1 bool) {
		t.Run("names-lfinit", func(t *testing.T) {
			t.Parallel()
			r, addr := startActivated(t, pid1, "$$")
			a := activationLine(t, r.path("activation"))
			if a["listen_pid"] != a["pid"] || a["listen_fds"] != "1" || a["listen_fdnames"] != "web" || a["fd3"] != "listening" || a["sd_listen_fds"] != "true" {
				t.Fatalf("the child saw %v, want LISTEN_PID its pid, LISTEN_FDS=1, the names, and the socket on 3", a)
			}
			if got, err := measure.FirstLine(addr, 10*time.Second); err != nil || got != "hello from "+a["pid"] {
				t.Fatalf("the socket answered %q (%v), want the child's hello", got, err)
			}
			r.signal(syscall.SIGTERM)
			if got := r.wait(10 * time.Second); got != 143 {
				t.Fatalf("exit %d, want 143", got)
			}
		})
		other := strconv.Itoa(os.Getpid())
		for _, tc := range []struct {
			name string
			opts []string
			fd3  string
		}{{"names-another", nil, "none"}, {"names-another-preserved", []string{"--preserve-fds", "1"}, "listening"}} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				r, _ := startActivated(t, pid1, other, tc.opts...)
				a := activationLine(t, r.path("activation"))
				if a["listen_pid"] != other || a["listen_fds"] != "1" || a["listen_fdnames"] != "web" || a["fd3"] != tc.fd3 || a["sd_listen_fds"] != "false" {
					t.Fatalf("the child saw %v, want the variables unchanged and descriptor 3 %s (inherited)", a, tc.fd3)
				}
				r.signal(syscall.SIGTERM)
				r.wait(10 * time.Second)
			})
		}
	})
}

// TestSocketActivationExecFailures: through the exec step, a command
// that is not found exits 127 and one that is not executable 126, with
// the messages of a direct start.
func TestSocketActivationExecFailures(t *testing.T) {
	t.Parallel()
	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	bothModes(t, func(t *testing.T, pid1 bool) {
		for _, tc := range []struct {
			cmd, msg string
			code     int
		}{{"/no/such/program", "no such file", 127}, {plain, "permission denied", 126}} {
			r := startLaunch(t, pid1, []string{"--", tc.cmd}, launch{wrapper: []string{"sh", "-c", `LISTEN_PID=$$ LISTEN_FDS=0 exec "$@"`, "sh"}})
			if got := r.wait(10 * time.Second); got != tc.code || !strings.Contains(r.stderr.String(), tc.msg) {
				t.Errorf("%s: exit %d, want %d saying %q:\n%s", tc.cmd, got, tc.code, tc.msg, r.stderr.String())
			}
		}
	})
}

// pipeOnFD3 makes a FIFO whose writer is lfinit's descriptor 3 (opened by
// a shell that then execs lfinit, so nothing else holds it: not unshare,
// not the test) and reads it: each read, and EOF, arrive on the channel.
func pipeOnFD3(t *testing.T) (wrapper []string, reads <-chan string) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 16)
	go func() {
		defer close(ch)
		f, err := os.Open(fifo) // returns once the shell opened its end
		if err != nil {
			return
		}
		defer f.Close()
		buf := make([]byte, 64)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				ch <- string(buf[:n])
			}
			if err != nil {
				ch <- "EOF"
				return
			}
		}
	}()
	t.Cleanup(func() {
		// A test that failed early: open the writer once, so the reader
		// is never left blocked in its open.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	return []string{"sh", "-c", `exec 3>"$0"; exec "$@"`, fifo}, ch
}

// next waits for the next read of the pipe.
func next(t *testing.T, reads <-chan string, limit time.Duration) string {
	t.Helper()
	select {
	case s := <-reads:
		return s
	case <-time.After(limit):
		t.Fatalf("nothing from the pipe after %v", limit)
	}
	return ""
}

// TestInheritedPipeIsClosedByLfinit: a pipe inherited on descriptor 3
// reaches EOF while lfinit and its child still run: at once when the
// child does not get it, and with --preserve-fds=1 once the child closes
// its end (a second after writing to it), never held open by lfinit.
func TestInheritedPipeIsClosedByLfinit(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, pid1 bool) {
		t.Run("not-passed", func(t *testing.T) {
			t.Parallel()
			wrapper, reads := pipeOnFD3(t)
			r := startLaunch(t, pid1, []string{"HELPER", "-ready-file", "DIR/ready"}, launch{wrapper: wrapper})
			if got := next(t, reads, 10*time.Second); got != "EOF" {
				t.Fatalf("read %q, want EOF", got)
			}
			r.waitFile("ready")
			stillRunning(t, r)
			r.signal(syscall.SIGTERM)
			r.wait(10 * time.Second)
		})
		t.Run("preserved", func(t *testing.T) {
			t.Parallel()
			wrapper, reads := pipeOnFD3(t)
			r := startLaunch(t, pid1, []string{"--preserve-fds", "1", "--", "sh", "-c", "printf x >&3; sleep 1; exec 3>&-; exec sleep 100"}, launch{wrapper: wrapper})
			if got := next(t, reads, 10*time.Second); got != "x" {
				t.Fatalf("read %q, want the child's x", got)
			}
			wrote := time.Now()
			if got := next(t, reads, 10*time.Second); got != "EOF" {
				t.Fatalf("read %q, want EOF", got)
			}
			if d := time.Since(wrote); d < 900*time.Millisecond {
				t.Fatalf("EOF %v after the child wrote, before it closed its end (a second later)", d)
			}
			stillRunning(t, r)
			r.signal(syscall.SIGTERM)
			r.wait(10 * time.Second)
		})
	})
}

// stillRunning fails the test unless lfinit and a child of it are alive.
func stillRunning(t *testing.T, r *run) {
	t.Helper()
	lf := r.lfinitPid()
	if !alive(lf) {
		t.Fatal("lfinit is gone")
	}
	if kids := childrenOf(lf); len(kids) == 0 || !alive(kids[0]) {
		t.Fatal("lfinit's child is gone")
	}
}

// TestLogTellsTheCauseFirst: at debug, the signal received is logged
// before the stop signal it caused, and every duration has at most six
// decimals (microseconds, without binary noise).
func TestLogTellsTheCauseFirst(t *testing.T) {
	t.Parallel()
	r := startSubreaper(t, "HELPER", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	r.signal(syscall.SIGTERM)
	r.wait(10 * time.Second)
	log := r.stderr.String()
	got, sent := strings.Index(log, `msg="signal received"`), strings.Index(log, `msg="stop signal sent"`)
	if got < 0 || sent < 0 || got > sent {
		t.Fatalf("want \"signal received\" before \"stop signal sent\":\n%s", log)
	}
	for _, f := range strings.Fields(log) {
		k, v, _ := strings.Cut(f, "=")
		if _, frac, ok := strings.Cut(v, "."); strings.HasSuffix(k, "_seconds") && ok && len(frac) > 6 {
			t.Errorf("%s: more than microseconds", f)
		}
	}
}

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// pane is a real pseudo-terminal: a tmux session of its own (a private
// server socket per test), typed into with send-keys and read with
// capture-pane, as a person at a terminal would.
type pane struct {
	t      *testing.T
	socket string
}

// panes numbers the panes, for their sockets.
var panes atomic.Int64

// newPane runs shellCmd (through sh -c) in a fresh 120x40 terminal.
func newPane(t *testing.T, shellCmd string) *pane {
	t.Helper()
	needRoot(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("terminal tests need tmux (scripts/install-deps installs it)")
	}
	// A socket of its own each time: a server being killed by an earlier
	// pane of the same name may still hold the old one.
	p := &pane{t: t, socket: fmt.Sprintf("lfinit-e2e-%d-%d", os.Getpid(), panes.Add(1))}
	p.tmux("new-session", "-d", "-s", "e2e", "-x", "120", "-y", "40", shellCmd)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen:\n%s", p.screen())
		}
		exec.Command("tmux", "-L", p.socket, "kill-server").Run()
	})
	return p
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// keys types keys: text, or tmux key names such as Enter and C-z.
func (p *pane) keys(keys ...string) {
	p.t.Helper()
	p.tmux(append([]string{"send-keys", "-t", "e2e"}, keys...)...)
}

// line types text and Enter.
func (p *pane) line(text string) { p.t.Helper(); p.keys(text, "Enter") }

func (p *pane) screen() string {
	out, err := exec.Command("tmux", "-L", p.socket, "capture-pane", "-p", "-S", "-100", "-t", "e2e").CombinedOutput()
	if err != nil {
		return "(capture-pane: " + err.Error() + ")"
	}
	return string(out)
}

// waitFor waits until the screen shows text (count times).
func (p *pane) waitFor(text string, count int) {
	p.t.Helper()
	waitFor(p.t, 15*time.Second, fmt.Sprintf("%q on the terminal", text), func() bool { return strings.Count(p.screen(), text) >= count })
}

// interactive is an interactive bash without the user's files, whose prompt is "PROMPT$ ".
const interactive = "env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=xterm PS1='PROMPT$ ' bash --norc --noprofile -i"

// TestTerminalShellAsPID1 is `docker run -it IMAGE bash` with lfinit as
// PID 1: the prompt appears, job control works (Ctrl-Z, fg, Ctrl-C gives
// 130), and exit 7 is lfinit's exit code.
func TestTerminalShellAsPID1(t *testing.T) {
	long(t)
	t.Parallel()
	p := newPane(t, fmt.Sprintf("unshare --pid --fork --mount-proc %s -- %s; echo LFINIT-EXIT=$?; sleep 60", lfinitBin, interactive))
	p.waitFor("PROMPT$", 1)
	p.line("echo is-$((6*7))")
	p.waitFor("is-42", 1)
	p.line("sleep 100")
	time.Sleep(300 * time.Millisecond)
	p.keys("C-z")
	p.waitFor("Stopped", 1)
	p.line("fg")
	p.waitFor("sleep 100", 3)
	time.Sleep(300 * time.Millisecond)
	p.keys("C-c")
	p.line("echo rc=$?")
	p.waitFor("rc=130", 1)
	p.line("exit 7")
	p.waitFor("LFINIT-EXIT=7", 1)
}

// TestTerminalPythonREPL: a python3 REPL under lfinit as PID 1 prompts,
// turns Ctrl-C into KeyboardInterrupt, and exit(5) is lfinit's exit code.
func TestTerminalPythonREPL(t *testing.T) {
	long(t)
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 (scripts/install-deps installs it)")
	}
	p := newPane(t, fmt.Sprintf("unshare --pid --fork --mount-proc %s -- %s -q; echo LFINIT-EXIT=$?; sleep 60", lfinitBin, py))
	p.waitFor(">>>", 1)
	p.keys("C-c")
	p.waitFor("KeyboardInterrupt", 1)
	p.line("exit(5)")
	p.waitFor("LFINIT-EXIT=5", 1)
}

// TestTerminalCat: cat under lfinit as PID 1 echoes a typed line and exits
// 0 on Ctrl-D.
func TestTerminalCat(t *testing.T) {
	t.Parallel()
	p := newPane(t, fmt.Sprintf("unshare --pid --fork --mount-proc %s -- cat; echo LFINIT-EXIT=$?; sleep 60", lfinitBin))
	time.Sleep(300 * time.Millisecond)
	p.line("hello-cat")
	p.waitFor("hello-cat", 2) // the terminal's echo, then cat's
	p.keys("C-d")
	p.waitFor("LFINIT-EXIT=0", 1)
}

// TestJobControlInAShell: lfinit as a job of an interactive shell (not
// PID 1). Ctrl-Z stops cat and lfinit with it, so the shell says Stopped;
// fg resumes both and gives cat the terminal again; a SIGTSTP sent to
// lfinit is relayed and stops both, SIGCONT resumes both.
func TestJobControlInAShell(t *testing.T) {
	long(t)
	t.Parallel()
	p := newPane(t, interactive)
	p.waitFor("PROMPT$", 1)
	p.line(lfinitBin + " --log-level warn -- cat")
	time.Sleep(300 * time.Millisecond)
	p.line("one")
	p.waitFor("one", 2)
	p.keys("C-z")
	p.waitFor("Stopped", 1)
	p.line("jobs -l; ps -o stat= -o comm= -p $(jobs -p); echo ps-done")
	p.waitFor("ps-done", 2)
	if s := p.screen(); !strings.Contains(s, "Stopped") || !regexpStopped(s, "lfinit") {
		t.Fatalf("lfinit is not stopped with its child:\n%s", s)
	}
	p.line("fg")
	time.Sleep(300 * time.Millisecond)
	p.line("two")
	p.waitFor("two", 2)
	p.keys("C-d")
	p.line("echo rc=$?")
	p.waitFor("rc=0", 1)

	p.line(lfinitBin + " --log-level warn -- sleep 100 &")
	time.Sleep(500 * time.Millisecond)
	p.line("kill -TSTP %1; sleep 0.5; jobs")
	p.waitFor("Stopped", 2)
	p.line("kill -CONT %1; sleep 0.5; jobs; echo jobs-done")
	p.waitFor("jobs-done", 2)
	waitFor(t, 10*time.Second, "the job running again", func() bool {
		s := p.screen()
		return strings.Contains(s[strings.LastIndex(s, "kill -CONT"):], "Running")
	})
	p.line("kill %1; wait %1; echo rc=$?")
	p.waitFor("rc=143", 1)
}

// regexpStopped reports whether a ps line shows comm in state T.
func regexpStopped(screen, comm string) bool {
	for _, l := range strings.Split(screen, "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && strings.HasPrefix(f[0], "T") && f[1] == comm {
			return true
		}
	}
	return false
}

// TestTerminalTermFromTheEngine: with a terminal, a SIGTERM to lfinit still
// starts the bounded shutdown and reaches the child, as without one.
func TestTerminalTermFromTheEngine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := newPane(t, fmt.Sprintf("%s --status-file %s/status --log-level warn -- cat; echo LFINIT-EXIT=$?; sleep 60", lfinitBin, dir))
	var pid int
	waitFor(t, 10*time.Second, "the status file", func() bool {
		b, err := os.ReadFile(dir + "/status")
		if err != nil {
			return false
		}
		i := strings.Index(string(b), `"pid":`)
		if i < 0 {
			return false
		}
		rest := strings.TrimLeft(string(b)[i+6:], " ")
		pid, err = strconv.Atoi(rest[:strings.IndexAny(rest, ",}")])
		return err == nil
	})
	p.line("before")
	p.waitFor("before", 2)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.waitFor("LFINIT-EXIT=143", 1)
}

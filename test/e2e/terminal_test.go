package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/ttypane"
)

// newPane runs shellCmd in a real pseudo-terminal (a tmux session).
func newPane(t *testing.T, shellCmd string) *ttypane.Pane {
	t.Helper()
	needRoot(t)
	return ttypane.New(t, shellCmd, 15*time.Second)
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
	p.WaitFor("PROMPT$", 1)
	p.Line("echo is-$((6*7))")
	p.WaitFor("is-42", 1)
	p.Line("sleep 100")
	p.WaitForeground("sleep")
	p.Keys("C-z")
	p.WaitFor("Stopped", 1)
	p.WaitForeground("bash")
	p.Line("fg")
	p.WaitFor("sleep 100", 3)
	p.WaitForeground("sleep")
	p.Keys("C-c")
	p.Line("echo rc=$?")
	p.WaitFor("rc=130", 1)
	p.Line("exit 7")
	p.WaitFor("LFINIT-EXIT=7", 1)
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
	p.WaitFor(">>>", 1)
	p.Keys("C-c")
	p.WaitFor("KeyboardInterrupt", 1)
	p.Line("exit(5)")
	p.WaitFor("LFINIT-EXIT=5", 1)
}

// TestTerminalCat: cat under lfinit as PID 1 echoes a typed line and exits
// 0 on Ctrl-D.
func TestTerminalCat(t *testing.T) {
	t.Parallel()
	catSession(newPane(t, fmt.Sprintf("unshare --pid --fork --mount-proc %s -- cat; echo LFINIT-EXIT=$?; sleep 60", lfinitBin)))
}

// TestTerminalCatAsUser: with --user the child still takes the terminal's
// foreground (Go's child makes the TIOCSPGRP before its setuid), so cat
// reads and echoes as it does without it.
func TestTerminalCatAsUser(t *testing.T) {
	t.Parallel()
	catSession(newPane(t, fmt.Sprintf("unshare --pid --fork --mount-proc %s --user 65534:65534 -- cat; echo LFINIT-EXIT=$?; sleep 60", lfinitBin)))
}

// catSession types a line to cat under lfinit, sees it echoed twice (the
// terminal's echo, then cat's: a cat out of the foreground would be
// stopped instead), and ends it with Ctrl-D: lfinit exits 0.
func catSession(p *ttypane.Pane) {
	p.WaitForeground("cat")
	p.Line("hello-cat")
	p.WaitFor("hello-cat", 2)
	p.Keys("C-d")
	p.WaitFor("LFINIT-EXIT=0", 1)
}

// TestJobControlInAShell: lfinit as a job of an interactive shell (not
// PID 1). Ctrl-Z stops cat and lfinit with it, so the shell says Stopped;
// fg resumes both and gives cat the terminal again; a SIGTSTP sent to
// lfinit is relayed and stops both, SIGCONT resumes both.
func TestJobControlInAShell(t *testing.T) {
	long(t)
	t.Parallel()
	p := newPane(t, interactive)
	p.WaitFor("PROMPT$", 1)
	p.Line(lfinitBin + " --log-level warn -- cat")
	p.WaitForeground("cat")
	p.Line("one")
	p.WaitFor("one", 2)
	p.Keys("C-z")
	p.WaitFor("Stopped", 1)
	// The marker is computed by the shell: a typed line can be echoed
	// twice (typeahead, then the prompt's redisplay) before any output.
	p.Line("jobs -l; ps -o stat= -o comm= -p $(jobs -p); echo ps-done-$((6*7))")
	p.WaitFor("ps-done-42", 1)
	if s := p.Screen(); !strings.Contains(s, "Stopped") || !regexpStopped(s, "lfinit") {
		t.Fatalf("lfinit is not stopped with its child:\n%s", s)
	}
	p.Line("fg")
	p.WaitForeground("cat") // lfinit gives the terminal back to its child
	p.Line("two")
	p.WaitFor("two", 2)
	p.Keys("C-d")
	p.Line("echo rc=$?")
	p.WaitFor("rc=0", 1)

	// The TSTP is sent once lfinit runs its child, and so has its signal
	// handlers (they come first): before, it would stop lfinit by the
	// default action, and the job would say Stopped for the wrong reason.
	// Then the shell asks until the job's state has changed, and says so
	// in words the typed line does not hold ($((1+1)) is 2 only in the
	// output).
	p.Line(lfinitBin + " --log-level warn -- sleep 100 & until pgrep -x -P $! sleep >/dev/null; do sleep 0.05; done; echo child-$((1+1))-up")
	p.WaitFor("child-2-up", 1)
	p.Line("kill -TSTP %1; until jobs %1 | grep -q Stopped; do sleep 0.05; done; jobs; echo job-$((1+1))-stopped")
	p.WaitFor("job-2-stopped", 1)
	p.Line("kill -CONT %1; until jobs %1 | grep -q Running; do sleep 0.05; done; jobs; echo job-$((1+1))-running")
	p.WaitFor("job-2-running", 1)
	p.Line("kill %1; wait %1; echo rc=$?")
	p.WaitFor("rc=143", 1)
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
	p.Line("before")
	p.WaitFor("before", 2)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.WaitFor("LFINIT-EXIT=143", 1)
}

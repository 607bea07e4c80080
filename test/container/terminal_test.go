package container

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/ttypane"
)

// `podman run -it` typed into through a real pseudo-terminal (tmux), with
// lfinit as the image's ENTRYPOINT and as `podman run --init --init-path`,
// running busybox's shell and cat from a FROM scratch image.

const (
	// shellImage holds busybox as /bin/busybox, sh, cat, sleep, echo, cut
	// and ps, with no ENTRYPOINT: for --init --init-path.
	shellImage = "localhost/lfinit-busybox:test"
	// ttyImage is shellImage with lfinit as ENTRYPOINT and sh as CMD.
	ttyImage = "localhost/lfinit-tty:test"
	busybox  = "/bin/busybox"
)

var (
	ttyOnce sync.Once
	ttyErr  error
)

// buildTTYImages builds shellImage and ttyImage once, or skips the test
// when a terminal test cannot run here.
func buildTTYImages(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the podman terminal tests take about 15 s")
	}
	needPodman(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("terminal tests need tmux (scripts/install-deps installs it)")
	}
	if !staticELF(busybox) {
		t.Skip("terminal tests need a static " + busybox + " (scripts/install-qualification-deps installs busybox-static)")
	}
	ttyOnce.Do(func() { ttyErr = buildTTY() })
	if ttyErr != nil {
		t.Fatal(ttyErr)
	}
}

// staticELF reports whether path is an executable without an interpreter,
// which a FROM scratch image can run.
func staticELF(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

// buildTTY copies the host's static busybox into a build context with its
// applets as symlinks, and builds shellImage and ttyImage from it.
func buildTTY() error {
	b, err := os.ReadFile(busybox)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(binDir, "busybox"), b, 0o755); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(filepath.Dir(binDir), "tty-")
	if err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		return err
	}
	for _, applet := range []string{"sh", "cat", "sleep", "echo", "cut", "ps"} {
		if err := os.Symlink("busybox", filepath.Join(dir, "bin", applet)); err != nil {
			return err
		}
	}
	if err := buildImage(dir, shellImage, "FROM scratch\nCOPY bin /bin\nENV PS1=\"PROMPT$ \"\nCMD [\"/bin/sh\"]\n",
		map[string]string{"bin/busybox": "busybox"}); err != nil {
		return err
	}
	return buildImage(filepath.Join(dir, "lfinit"), ttyImage, "FROM "+shellImage+"\nCOPY lfinit /\nENTRYPOINT [\"/lfinit\", \"--\"]\nCMD [\"/bin/sh\"]\n",
		map[string]string{"lfinit": "lfinit"})
}

// newPane runs shellCmd in a real pseudo-terminal (a tmux session).
func newPane(t *testing.T, shellCmd string) *ttypane.Pane {
	t.Helper()
	return ttypane.New(t, shellCmd, 30*time.Second)
}

// podmanRunIt is the shell command line, for a pane, of `podman run --rm
// -it` with args, then podman's exit code as PODMAN-EXIT=N, and the
// container it runs. The pane's command gets the private store and
// configuration explicitly.
func podmanRunIt(t *testing.T, args ...string) (string, *ttyCtr) {
	c := &ttyCtr{t: t, name: "lfq-" + strings.ToLower(nameRE.ReplaceAllString(t.Name(), "-"))}
	t.Cleanup(func() { podmanCmd(time.Minute, "rm", "--force", "--time", "0", c.name) })
	env := []string{"CONTAINERS_CONF", "CONTAINERS_STORAGE_CONF", "PATH"}
	for i, k := range env {
		env[i] = shellQuote(k + "=" + os.Getenv(k))
	}
	run := []string{"podman", "run", "--rm", "-it", "--name", c.name, "--network", "none"}
	for _, a := range args {
		run = append(run, shellQuote(a))
	}
	return fmt.Sprintf("env %s %s; echo PODMAN-EXIT=$?; sleep 60", strings.Join(env, " "), strings.Join(run, " ")), c
}

// ttyCtr is a container run in a pane, whose processes the test watches
// through the host's /proc.
type ttyCtr struct {
	t    *testing.T
	name string
	sid  int // the host's pid of its PID 1, which leads its session
}

// procStat is what /proc/PID/stat says of a process's state and groups.
type procStat struct {
	state       byte
	pgrp, tpgid int
}

// inForeground: running or asleep, in the terminal's foreground group.
func inForeground(s procStat) bool { return (s.state == 'S' || s.state == 'R') && s.pgrp == s.tpgid }

// procs is the container's processes named comm.
func (c *ttyCtr) procs(comm string) []procStat {
	c.t.Helper()
	if c.sid == 0 {
		waitFor(c.t, 30*time.Second, "container "+c.name+" running", func() bool {
			out, err := podmanCmd(30*time.Second, "inspect", "--format", "{{.State.Pid}}", c.name)
			_, serr := fmt.Sscan(out, &c.sid)
			return err == nil && serr == nil && c.sid > 0
		})
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var found []procStat
	for _, path := range stats {
		b, err := os.ReadFile(path)
		i := strings.LastIndexByte(string(b), ')')
		if err != nil || i < 0 || !strings.HasSuffix(string(b[:i]), "("+comm) {
			continue
		}
		var s procStat
		var ppid, sid, tty int
		if _, err := fmt.Sscanf(string(b[i+2:]), "%c %d %d %d %d %d", &s.state, &ppid, &s.pgrp, &sid, &tty, &s.tpgid); err == nil && sid == c.sid {
			found = append(found, s)
		}
	}
	return found
}

// waitProc waits until the container has exactly one process named comm,
// and ok holds for it.
func (c *ttyCtr) waitProc(comm, what string, ok func(procStat) bool) {
	c.t.Helper()
	waitFor(c.t, 30*time.Second, comm+" "+what, func() bool {
		p := c.procs(comm)
		return len(p) == 1 && ok(p[0])
	})
}

// waitGone waits until the container has no process named comm.
func (c *ttyCtr) waitGone(comm string) {
	c.t.Helper()
	waitFor(c.t, 30*time.Second, comm+" gone", func() bool { return len(c.procs(comm)) == 0 })
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestTerminalPodman is `podman run -it IMAGE sh` and `... cat` with
// lfinit as the image's ENTRYPOINT and as --init --init-path: the shell
// prompts and does job control, exit 7 is podman's exit code; cat echoes
// a line and exits 0 on Ctrl-D, Ctrl-C ends it with 130, and podman stop
// is a graceful shutdown (143).
func TestTerminalPodman(t *testing.T) {
	buildTTYImages(t)
	ways := map[string][]string{
		"entrypoint": {ttyImage},
		"init-path":  {"--init", "--init-path", filepath.Join(binDir, "lfinit"), shellImage},
	}
	for _, way := range []string{"entrypoint", "init-path"} {
		t.Run(way+"/sh", func(t *testing.T) {
			cmd, c := podmanRunIt(t, ways[way]...)
			shellSession(t, newPane(t, cmd), c, map[string]string{"entrypoint": "lfinit", "init-path": "podman-init"}[way])
		})
		t.Run(way+"/cat", func(t *testing.T) {
			cmd, c := podmanRunIt(t, append(ways[way], "/bin/cat")...)
			p := newPane(t, cmd)
			c.waitProc("cat", "reading in the terminal's foreground", inForeground)
			p.Line("hello-cat")
			p.WaitFor("hello-cat", 2) // the terminal's echo, then cat's
			p.Keys("C-d")
			p.WaitFor("PODMAN-EXIT=0", 1)
		})
		// Ctrl-C reaches cat's group, not lfinit: cat's death by SIGINT
		// is the exit code, and lfinit did not start a shutdown. A
		// normal end on a terminal the child had: lfinit prints nothing.
		t.Run(way+"/cat-ctrl-c", func(t *testing.T) {
			cmd, c := podmanRunIt(t, append(ways[way], "/bin/cat")...)
			p := newPane(t, cmd)
			c.waitProc("cat", "reading in the terminal's foreground", inForeground)
			p.Keys("C-c")
			p.WaitFor("PODMAN-EXIT=130", 1)
			quietEnd(t, p)
		})
		// podman stop's TERM still starts the bounded shutdown (a graceful
		// one, so nothing of lfinit's on the terminal either).
		t.Run(way+"/cat-stop", func(t *testing.T) {
			cmd, c := podmanRunIt(t, append(ways[way], "/bin/cat")...)
			p := newPane(t, cmd)
			c.waitProc("cat", "reading in the terminal's foreground", inForeground)
			podman(t, "stop", "--time", "10", c.name)
			p.WaitFor("PODMAN-EXIT=143", 1)
			quietEnd(t, p)
		})
	}
}

// quietEnd fails the test if the screen shows a line of lfinit's: on the
// terminal it gave the child, a normal end prints nothing at the default
// level, as with tini, dumb-init and catatonit.
func quietEnd(t *testing.T, p *ttypane.Pane) {
	t.Helper()
	if s := p.Screen(); strings.Contains(s, "logger=lfinit") {
		t.Errorf("lfinit wrote to the terminal after a normal end:\n%s", s)
	}
}

// shellSession types into busybox's sh in the container: the prompt, the
// process groups and the terminal (PID 1, whose name is init, leads
// session 1 and has the terminal; the shell leads a group of its own, which
// holds the foreground), job control (Ctrl-Z, fg, Ctrl-C gives 130), and
// exit 7 → podman run exits 7.
func shellSession(t *testing.T, p *ttypane.Pane, c *ttyCtr, init string) {
	p.WaitFor("PROMPT$", 1)
	p.Line(`echo "ids pid1=$(cut -d' ' -f2,5-7 /proc/1/stat) sh=$$:$(cut -d' ' -f5-8 /proc/$$/stat)"`)
	p.WaitFor("ids pid1=", 2) // the typed line, then the output
	var comm string
	var pgrp1, sid1, tty1, shell, pgrp, sid, tty, tpgid int
	screen := p.Screen()
	line := screen[strings.LastIndex(screen, "ids pid1="):]
	if _, err := fmt.Sscanf(line, "ids pid1=%s %d %d %d sh=%d:%d %d %d %d", &comm, &pgrp1, &sid1, &tty1, &shell, &pgrp, &sid, &tty, &tpgid); err != nil {
		t.Fatalf("reading %q: %v", line, err)
	}
	t.Logf("PID 1 %s: pgrp %d, session %d, tty %d; the shell %d: pgrp %d, session %d, tty %d, foreground group %d", comm, pgrp1, sid1, tty1, shell, pgrp, sid, tty, tpgid)
	if comm != "("+init+")" || pgrp1 != 1 || sid1 != 1 || tty1 == 0 || pgrp != shell || sid != 1 || tty != tty1 || tpgid != shell {
		t.Errorf("want PID 1 (%s) leading session 1 on a terminal, the shell leading its own group in the foreground", init)
	}
	p.Line("sleep 100")
	c.waitProc("sleep", "running in the terminal's foreground", inForeground)
	p.Keys("C-z")
	p.WaitFor("Stopped", 1)
	c.waitProc("sleep", "stopped", func(s procStat) bool { return s.state == 'T' })
	p.Line("fg")
	c.waitProc("sleep", "running in the terminal's foreground again", inForeground)
	p.Keys("C-c")
	c.waitGone("sleep")
	p.Line("echo rc=$?")
	p.WaitFor("rc=130", 1)
	p.Line("exit 7")
	p.WaitFor("PODMAN-EXIT=7", 1)
}

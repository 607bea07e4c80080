// Package ttypane gives the terminal tests a real pseudo-terminal: a tmux
// session of its own, typed into with send-keys and read with
// capture-pane, as a person at a terminal would.
package ttypane

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Pane is one tmux session on a private server socket.
type Pane struct {
	t      *testing.T
	socket string
	wait   time.Duration
}

// panes numbers the panes, for their sockets.
var panes atomic.Int64

// session is every pane's tmux session name (each has its own server).
const session = "pane"

// New runs shellCmd (through sh -c) in a fresh 120x40 terminal; WaitFor
// gives up after wait. It skips the test when tmux is not installed.
func New(t *testing.T, shellCmd string, wait time.Duration) *Pane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("terminal tests need tmux (scripts/install-deps installs it)")
	}
	// A socket of its own each time: a server being killed by an earlier
	// pane of the same name may still hold the old one.
	p := &Pane{t: t, socket: fmt.Sprintf("lfinit-pane-%d-%d", os.Getpid(), panes.Add(1)), wait: wait}
	p.tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", shellCmd)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen:\n%s", p.Screen())
		}
		exec.Command("tmux", "-L", p.socket, "kill-server").Run()
	})
	return p
}

func (p *Pane) tmux(args ...string) {
	p.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm")
	if out, err := cmd.CombinedOutput(); err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
}

// Keys types keys: text, or tmux key names such as Enter and C-z.
func (p *Pane) Keys(keys ...string) {
	p.t.Helper()
	p.tmux(append([]string{"send-keys", "-t", session}, keys...)...)
}

// Line types text and Enter.
func (p *Pane) Line(text string) { p.t.Helper(); p.Keys(text, "Enter") }

// Screen is what the terminal shows and its last 100 lines of history,
// with wrapped lines joined.
func (p *Pane) Screen() string {
	out, err := exec.Command("tmux", "-L", p.socket, "capture-pane", "-p", "-J", "-S", "-100", "-t", session).CombinedOutput()
	if err != nil {
		return "(capture-pane: " + err.Error() + ")"
	}
	return string(out)
}

// WaitFor waits until the screen shows text (count times), or fails the
// test.
func (p *Pane) WaitFor(text string, count int) {
	p.t.Helper()
	for deadline := time.Now().Add(p.wait); strings.Count(p.Screen(), text) < count; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.t.Fatalf("no %q on the terminal after %v", text, p.wait)
		}
	}
}

// WaitForeground waits until the process leading the terminal's foreground
// group is named name (tmux's pane_current_command), or fails the test: a
// key such as C-z reaches whichever group has the terminal when it is typed.
func (p *Pane) WaitForeground(name string) {
	p.t.Helper()
	for deadline := time.Now().Add(p.wait); ; time.Sleep(20 * time.Millisecond) {
		out, err := exec.Command("tmux", "-L", p.socket, "display-message", "-p", "-t", session, "#{pane_current_command}").Output()
		got := strings.TrimSpace(string(out))
		if err == nil && got == name {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the terminal's foreground is %q after %v, want %q (%v)", got, p.wait, name, err)
		}
	}
}

package supervisor

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/spawn"
)

// openTerminal finds lfinit's controlling terminal and reports whether the
// child gets its foreground: only when lfinit's own group holds it, so a
// shell, a REPL or cat can read and set the terminal instead of being
// stopped by SIGTTIN/SIGTTOU, and Ctrl-C, Ctrl-\ and Ctrl-Z reach the
// child's group directly (as with tini). Not as PID 1, a run on a terminal
// is a shell's job: lfinit then stops when its child stops (see suspend).
func (r *runner) openTerminal() bool {
	r.tty = spawn.ControllingTerminal()
	if r.tty == nil {
		return false
	}
	r.jobControl = !r.PID1
	return r.tty.InForeground()
}

// suspend stops lfinit because its child stopped (Ctrl-Z, a background
// read, a relayed SIGTSTP): the shell whose job lfinit is then sees the
// job stopped and takes the terminal back; its fg or bg sends SIGCONT,
// which lfinit relays.
func (r *runner) suspend() {
	r.Log.Debug("child stopped; stopping lfinit too, so the shell sees its job stopped", "child_pid", r.child)
	unix.Kill(os.Getpid(), syscall.SIGSTOP)
}

// resumeTerminal, on SIGCONT, hands the terminal back to the child if the
// shell gave it to lfinit (fg); after bg it stays with the shell.
func (r *runner) resumeTerminal() {
	if r.tty == nil || r.reaped || !r.tty.InForeground() {
		return
	}
	if err := r.tty.Give(r.child); err != nil {
		r.Log.Debug("cannot give the terminal to the child", "child_pid", r.child, "err", err)
	}
}

// reclaimTerminal, once the child exited, takes the terminal's foreground
// back from the child's group, so that leftovers being cleaned up cannot
// read it and the keyboard's signals reach lfinit again.
func (r *runner) reclaimTerminal() {
	if r.tty == nil || !r.tty.Holds(r.child) {
		return
	}
	if err := r.tty.Reclaim(); err != nil {
		r.Log.Debug("cannot take the terminal back from the child's group", "err", err)
	}
}

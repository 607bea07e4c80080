package supervisor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/exitcode"
	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/reaper"
)

// The syscall side of services that daemonize (--pidfile, --wait-for=tree):
// reading the pidfile, adopting the process it names, signalling the tree.
// The decisions are core.Machine's (core/daemon_machine.go).

// pidfileLimit is how much of a pidfile is read: the pid is on its first
// line. pidfileReadWait bounds how long the loop waits for one read.
const (
	pidfileLimit    = 4096
	pidfileReadWait = 50 * time.Millisecond
)

// pidfileState is the loop's side of --pidfile.
type pidfileState struct {
	problem string           // the last problem logged
	pending chan pidfileRead // a read that has not returned yet
}

// pidfileRead is what one read of the pidfile returned.
type pidfileRead struct {
	b   []byte
	err error
}

// readPidfile reads the pidfile and adopts the process it names, or tells
// the machine what is wrong with it.
func (r *runner) readPidfile() []core.Action {
	b, err := r.readPidfileBounded()
	tree := reaper.Walk(r.self)
	pid, problem := checkPidfile(b, err, tree, r.self, reaper.Read)
	now := time.Now()
	if problem != "" {
		if problem != r.pidfile.problem {
			r.pidfile.problem = problem
			r.Log.Debug("the pidfile is not usable yet", "path", r.Pidfile, "problem", problem)
		}
		return r.m.PidfileChecked(now, problem)
	}
	r.follow(pid)
	r.Log.Debug("following the daemon named in the pidfile", "path", r.Pidfile, "daemon_pid", pid, "cmd", commOf(tree, pid))
	return r.m.Adopt(now)
}

// follow makes pid the main process, which gets the forwarded signals.
func (r *runner) follow(pid int) {
	r.child, r.reaped = pid, false
	if r.Target == forward.Group {
		// Its group only when it leads one: otherwise kill(-pid) names no
		// group at all, and the daemon would get nothing.
		if pgid, err := unix.Getpgid(pid); err != nil || pgid != pid {
			r.Target = forward.Child
			r.Log.Warn("the daemon does not lead a process group; forwarding to it alone", "daemon_pid", pid, "pgid", pgid)
		}
	}
}

// readPidfileBounded reads the pidfile off the loop, waiting at most
// pidfileReadWait: a hung filesystem must not hold up a signal or a
// deadline. A read that hangs is waited for again at the next poll, never
// started twice.
func (r *runner) readPidfileBounded() ([]byte, error) {
	if r.pidfile.pending == nil {
		ch := make(chan pidfileRead, 1)
		go func() {
			b, err := readHead(r.Pidfile)
			ch <- pidfileRead{b, err}
		}()
		r.pidfile.pending = ch
	}
	select {
	case res := <-r.pidfile.pending:
		r.pidfile.pending = nil
		return res.b, res.err
	case <-time.After(pidfileReadWait):
		return nil, fmt.Errorf("its read hung for more than %v", pidfileReadWait)
	}
}

// readHead reads the first pidfileLimit bytes of path.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, pidfileLimit))
}

// checkPidfile checks what a read of the pidfile returned, and the
// process it names on lfinit's tree (self's); read looks up the others.
func checkPidfile(b []byte, err error, tree []reaper.Proc, self int, read func(int) (reaper.Proc, bool)) (int, string) {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, "does not exist"
	case err != nil:
		return 0, fmt.Sprintf("cannot be read: %v", err)
	}
	pid, err := ParsePidfile(b)
	if err != nil {
		return 0, err.Error()
	}
	return pid, Adoptable(tree, self, pid, read)
}

// pidfileFailed logs why no daemon can be followed.
func (r *runner) pidfileFailed(problem string) {
	r.Log.Error("no daemon to follow: the pidfile "+problem, "path", r.Pidfile,
		"pidfile_timeout_seconds", seconds(r.PidfileTimeout), "exit_code", exitcode.NoPidfile)
}

// signalTree delivers a forward meant for every process of the tree.
func (r *runner) signalTree(sig syscall.Signal) error {
	reached, news := r.tree.signal(sig)
	r.news(news)
	if !reached {
		return errChildGone // nothing left to signal: nothing to report
	}
	return nil
}

// commOf is the command name of pid among procs, "" when it is not there.
func commOf(procs []reaper.Proc, pid int) string {
	for _, p := range procs {
		if p.Pid == pid {
			return p.Comm
		}
	}
	return ""
}

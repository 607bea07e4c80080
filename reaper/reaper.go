// Package reaper is lfinit's single owner of wait4(-1): it collects every
// exited child, makes lfinit a child subreaper when it is not PID 1, and
// finds and signals the processes of lfinit's tree.
package reaper

import (
	"errors"

	"golang.org/x/sys/unix"
)

// SetSubreaper makes orphans of lfinit's subtree re-parent to lfinit instead
// of to the namespace's init, so that lfinit can reap them.
func SetSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// Reap collects, without blocking, every child that has exited and reports
// each to fn. It returns true when lfinit has no child left at all: with
// lfinit as PID 1 or subreaper that means its whole tree is gone.
//
// With untraced, children that stopped are reported too (ws.Stopped()),
// once per stop, and stay children.
//
// Nothing else in lfinit may wait: a second waiter steals exit statuses.
func Reap(untraced bool, fn func(pid int, ws unix.WaitStatus)) (empty bool) {
	// __WALL: also children whose exit signal is not SIGCHLD.
	flags := unix.WNOHANG | unix.WALL
	if untraced {
		flags |= unix.WUNTRACED
	}
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, flags, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ECHILD):
			return true
		case err != nil || pid <= 0:
			return false
		}
		fn(pid, ws)
	}
}

// ExitCode is the shell's reading of a wait status: the exit status, or
// 128+N for a death by signal N.
func ExitCode(ws unix.WaitStatus) int {
	switch {
	case ws.Exited():
		return ws.ExitStatus()
	case ws.Signaled():
		return 128 + int(ws.Signal())
	}
	return 1
}

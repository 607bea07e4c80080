package reaper

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SetSubreaper makes orphans of lfinit's subtree re-parent to lfinit instead
// of to the namespace's init, so that lfinit can reap them.
func SetSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// Exit is one child that wait4 reported: exited, killed, or (untraced) stopped.
type Exit struct {
	Pid    int
	Status unix.WaitStatus
}

// Reap collects, without blocking, every child that has exited and appends
// each to exits, which the caller passes back in (emptied) to reuse its
// memory. empty is true when lfinit has no child left at all: with lfinit
// as PID 1 or subreaper that means its whole tree is gone.
//
// With untraced, children that stopped are reported too (Status.Stopped()),
// once per stop, and stay children.
//
// Nothing else in lfinit may wait: a second waiter steals exit statuses.
func Reap(untraced bool, exits []Exit) (_ []Exit, empty bool) {
	return ReapWatch(untraced, exits, 0, nil)
}

// ReapWatch is Reap that also stores in usage the resource usage of watch
// (the main child) when it is among the exits: its peak RSS and CPU time,
// which the kernel hands over only with its exit status.
func ReapWatch(untraced bool, exits []Exit, watch int, usage *unix.Rusage) (_ []Exit, empty bool) {
	// __WALL: also children whose exit signal is not SIGCHLD.
	flags := unix.WNOHANG | unix.WALL
	if untraced {
		flags |= unix.WUNTRACED
	}
	var ru unix.Rusage
	for {
		var ws unix.WaitStatus
		pid, err := wait4NoHang(&ws, flags, &ru)
		// Wait4 returns a bare Errno: compared directly, not with
		// errors.Is, whose reflection is work (and, after startpages.Drop,
		// page faults) on every reap.
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ECHILD:
			return exits, true
		case err != nil || pid <= 0:
			return exits, false
		}
		if pid == watch && usage != nil && !ws.Stopped() {
			*usage = ru
		}
		exits = append(exits, Exit{pid, ws})
	}
}

// Changed reports, without reaping it and in constant time, whether pid
// has exited (or, with untraced, stopped). Reap's wait4(-1) walks every
// child lfinit has; this looks at one.
func Changed(pid int, untraced bool) bool {
	opts := unix.WEXITED | unix.WNOHANG | unix.WNOWAIT | unix.WALL
	if untraced {
		opts |= unix.WSTOPPED
	}
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, opts, nil)
		if err == unix.EINTR {
			continue
		}
		// The kernel sets si_signo to SIGCHLD only when it reports a child.
		return err == nil && info.Signo == int32(unix.SIGCHLD)
	}
}

// wait4NoHang is wait4(-1, ws, flags, ru) for flags with WNOHANG, which never
// sleeps: as a raw system call, without the scheduler's bookkeeping around
// a call that may block (entersyscall, and the handoff of the processor
// that can follow it), the burst of a reap costs less CPU per zombie (the
// reaping rows of bench/RESULTS.md).
func wait4NoHang(ws *unix.WaitStatus, flags int, ru *unix.Rusage) (int, error) {
	var status int32
	anyChild := -1
	pid, _, errno := unix.RawSyscall6(unix.SYS_WAIT4, uintptr(anyChild), uintptr(unsafe.Pointer(&status)), uintptr(flags), uintptr(unsafe.Pointer(ru)), 0, 0)
	if errno != 0 {
		return -1, errno
	}
	*ws = unix.WaitStatus(status)
	return int(pid), nil
}

// CheckWait makes sure the wait calls lfinit lives on are allowed: under a
// seccomp profile that denies them no child would ever be reaped. It asks
// for a pid above any pid_max, so it reaps nothing.
func CheckWait() error {
	const none = 1 << 30
	var ws unix.WaitStatus
	if _, err := unix.Wait4(none, &ws, unix.WNOHANG, nil); err != unix.ECHILD {
		return fmt.Errorf("the wait4 system call fails (%v): lfinit cannot reap its children; allow wait4 and waitid in the seccomp profile", err)
	}
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, none, &info, unix.WEXITED|unix.WNOHANG, nil); err != unix.ECHILD {
		return fmt.Errorf("the waitid system call fails (%v): lfinit cannot see its child exit; allow wait4 and waitid in the seccomp profile", err)
	}
	return nil
}

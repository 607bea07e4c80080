package reaper

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/forward"
)

// Signalled is what one SignalTree round did.
type Signalled struct {
	Hit    []Proc    // signalled, or found already exiting
	Failed []Failure // found alive, but the signal could not be sent
}

// Failure is a process of the tree that a signal could not reach.
type Failure struct {
	Proc
	Err error
}

// errGone says a process exited (or its pid was recycled) before the
// signal: nothing to send, nothing to report.
var errGone = errors.New("gone")

// SignalTree sends sig to every live process of lfinit's tree. group, when
// above 1, is the main child's pid, not yet reaped: its process group and
// then the child itself are signalled before anything else, so that this
// cheap, sure reach waits for no discovery; what it hit shows as dying or
// zombie, and is listed. As PID 1 the tree is the whole PID namespace, and
// kill(-1) reaches all of it in one call (the kernel skips the caller).
// Anywhere else kill(-1) would reach the whole machine, so the tree is
// walked from lfinit down (Walk, whose cost is the tree's) and each
// process signalled as it is found, a parent before its children are read.
func SignalTree(pid1 bool, sig syscall.Signal, group int) Signalled {
	if group > 1 {
		forward.Deliver(group, forward.Group, sig)
		forward.Deliver(group, forward.Child, sig)
	}
	var out Signalled
	self := os.Getpid()
	if pid1 {
		if err := unix.Kill(-1, sig); err != nil {
			return out // ESRCH: nothing left to signal
		}
		// Listed after the kill, so the kill waits for no read; the dying
		// are listed with the live.
		for _, p := range Table() {
			if p.Pid != self && p.State != 'X' {
				out.Hit = append(out.Hit, p)
			}
		}
		return out
	}
	walk(self, func(p Proc) {
		if p.Exited() {
			out.Hit = append(out.Hit, p)
			return
		}
		switch err := signalExact(p, sig); {
		case err == nil:
			out.Hit = append(out.Hit, p)
		case err != errGone:
			out.Failed = append(out.Failed, Failure{p, err})
		}
	})
	return out
}

// signalExact signals p only if its pid still names the process found: a
// pidfd pins the process, so after the identity check nothing can recycle
// the pid. Where pidfds are missing or denied (a kernel older than 5.3, a
// seccomp profile that answers ENOSYS, EPERM or EACCES), the identity is
// checked and the pid signalled directly. Only ESRCH means gone.
func signalExact(p Proc, sig syscall.Signal) error {
	fd, err := unix.PidfdOpen(p.Pid, 0)
	if err == unix.ESRCH {
		return errGone
	}
	if err != nil {
		return killChecked(p, sig)
	}
	defer unix.Close(fd)
	if !stillRuns(p) {
		return errGone
	}
	switch err := unix.PidfdSendSignal(fd, sig, nil, 0); err {
	case nil:
		return nil
	case unix.ESRCH:
		return errGone
	default:
		return killChecked(p, sig) // the call itself denied
	}
}

// killChecked signals p by pid once it is still the process found. The
// pid can be recycled only once the process is reaped, and lfinit reaps
// its own children in the goroutine that runs this, so the window is a
// grandchild's parent reaping it between the check and the kill.
func killChecked(p Proc, sig syscall.Signal) error {
	// Never 0, -1 or the namespace's init, whatever a read returned.
	if p.Pid <= 1 || !stillRuns(p) {
		return errGone
	}
	switch err := unix.Kill(p.Pid, sig); err {
	case nil:
		return nil
	case unix.ESRCH:
		return errGone
	default:
		return err
	}
}

// stillRuns reports whether p.Pid still names the live process p (same start time).
func stillRuns(p Proc) bool {
	now, ok := Read(p.Pid)
	return ok && now.Start == p.Start && !now.Exited()
}

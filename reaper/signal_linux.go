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
	Hit    []Proc    // signalled
	Failed []Failure // found alive, but the signal could not be sent
	// Unsettled counts the processes KillTree found still running when it
	// stopped waiting for the tree to stop (FreezeWait), and Held their
	// children, left stopped for a later round.
	Unsettled, Held int
}

// Failure is a process of the tree that a signal could not reach.
type Failure struct {
	Proc
	Err error
}

// errGone says a process exited (or its pid was recycled) before the
// signal: nothing to send, nothing to report.
var errGone = errors.New("gone")

// SignalTree sends sig to every live process of lfinit's tree, and says
// which it reached. group, when above 1, is the main child's pid, not yet
// reaped: its process group and then the child itself are signalled
// before anything else, so that this cheap, sure reach waits for no
// discovery. The tree is read (as PID 1 the namespace's own /proc,
// anywhere else the walk from lfinit down, whose cost is the tree's) and
// each process signalled by pid as it is found; a parent that exits
// meanwhile hands its children to lfinit after its list was read, so the
// tree is read again until a read finds no process it had not signalled.
// Never kill(-1): anywhere but PID 1 it would reach the whole machine,
// and as PID 1 the kernel looks at every process of the host for it.
// Unlike KillTree it does not stop the tree first: a process that exits
// and is reaped by its parent in the microseconds between a read and the
// signal is not counted.
func SignalTree(pid1 bool, sig syscall.Signal, group int) Signalled {
	if group > 1 {
		forward.Deliver(group, forward.Group, sig)
		forward.Deliver(group, forward.Child, sig)
	}
	self := os.Getpid()
	var out Signalled
	seen := map[Proc]bool{}
	for round := 0; round < maxWalks; round++ {
		hit, failed := signalUnseen(pid1, self, sig, seen)
		out.Hit, out.Failed = append(out.Hit, hit...), append(out.Failed, failed...)
		if len(hit)+len(failed) == 0 {
			break
		}
	}
	return out
}

// signalUnseen reads lfinit's tree once (as PID 1 the namespace, else
// the walk below self, a parent before its children are read) and sends
// sig to each live process it finds that is not in seen (pid and start
// time), and adds it to seen. A process that is gone before the signal is
// in neither list.
func signalUnseen(pid1 bool, self int, sig syscall.Signal, seen map[Proc]bool) (hit []Proc, failed []Failure) {
	visitTree(pid1, self, func(p Proc) {
		id := Proc{Pid: p.Pid, Start: p.Start}
		if p.Exited() || seen[id] {
			return
		}
		seen[id] = true
		switch err := signalExact(p, sig); {
		case err == nil:
			hit = append(hit, p)
		case err != errGone:
			failed = append(failed, Failure{p, err})
		}
	})
	return hit, failed
}

// visitTree calls visit for each process of lfinit's tree, zombies
// included: as PID 1 every other process of the namespace, else each
// process below self (walk).
func visitTree(pid1 bool, self int, visit func(Proc)) {
	if !pid1 {
		walk(self, visit)
		return
	}
	for _, p := range Table() {
		if p.Pid != self {
			visit(p)
		}
	}
}

// maxWalks bounds SignalTree's walks: a tree that forks faster than it
// is walked is not chased for ever (the hard deadline's KillTree stops it).
const maxWalks = 4

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

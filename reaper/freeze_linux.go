package reaper

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/forward"
)

// FreezeWait bounds how long KillTree waits for the tree to stop before
// it kills what it may. A stopped process has to be scheduled once to
// stop: microseconds on an idle machine, tens of milliseconds on a
// crowded one.
const FreezeWait = 20 * time.Millisecond

// KillTree SIGKILLs the live processes of lfinit's tree, and says exactly
// which. It first stops the tree (SIGSTOP), so that while it is read and
// killed nothing in it can fork, exit on its own, or reap another: a
// parent that reaped a child lfinit had just killed would hide that kill
// from every count, and a parent killed before its children are read
// hands them to lfinit unseen. A stopped process cannot reap, so every
// process killed ends as lfinit's own zombie, and lfinit reaps it.
// Processes that had exited already (zombies) are not counted: nothing
// was done to them.
//
// A process that has not taken its stop within FreezeWait (not yet
// scheduled) is killed all the same, but with hold its children are not:
// until it is dead it could still reap them. They stay stopped, and a
// later call (the kill is repeated while the tree lives) kills them;
// without hold everything is killed at once.
//
// Only the kill stops the tree first: a stop and a resume around another
// signal would show in the tree (a shell's wait returns when its child
// resumes).
//
// group, when above 1, is the main child's pid, not yet reaped: its
// process group is stopped first, the cheapest reach. As PID 1 the tree
// is the PID namespace, stopped with kill(-1), which the kernel also
// delivers to a fork in flight; anywhere else the tree is walked again
// until a walk finds no process it had not stopped.
func KillTree(pid1 bool, group int, hold bool) Signalled {
	deadline := time.Now().Add(FreezeWait)
	if group > 1 {
		forward.Deliver(group, forward.Group, syscall.SIGSTOP)
		forward.Deliver(group, forward.Child, syscall.SIGSTOP)
	}
	self := os.Getpid()
	var frozen, running []Proc
	var out Signalled
	if pid1 {
		if err := unix.Kill(-1, syscall.SIGSTOP); err != nil {
			return out // ESRCH: nothing left
		}
		running = settle(others(Table(), self), deadline)
		if len(running) == 0 || !hold {
			return killNamespace(self)
		}
		frozen = Live(others(Table(), self))
	} else {
		frozen, out.Failed, running = freezeWalk(self, deadline)
	}
	out.Unsettled = len(running)
	unsettled := make(map[int]bool, len(running))
	for _, p := range running {
		unsettled[p.Pid] = hold
	}
	for _, p := range frozen {
		if unsettled[p.Ppid] {
			out.Held++
			continue
		}
		switch err := signalExact(p, syscall.SIGKILL); {
		case err == nil:
			out.Hit = append(out.Hit, p)
		case err != errGone: // gone: killed from outside since it stopped
			out.Failed = append(out.Failed, Failure{p, err})
		}
	}
	return out
}

// killNamespace kills, as PID 1, every other process of the stopped
// namespace with one kill(-1).
func killNamespace(self int) Signalled {
	// Read once stopped: a fork in flight at the stop shows now.
	live := Live(others(Table(), self))
	if err := unix.Kill(-1, syscall.SIGKILL); err != nil {
		return Signalled{}
	}
	return Signalled{Hit: live}
}

// freezeWalk stops every live process below self, walking the tree again
// once those it found have stopped, until a walk finds none it had not
// stopped, or the deadline passes with some still running: then frozen
// is all of the tree, and nothing in it but the running can change it.
func freezeWalk(self int, deadline time.Time) (frozen []Proc, failed []Failure, running []Proc) {
	seen := map[Proc]bool{}
	for {
		stopped, notStopped := signalUnseen(self, syscall.SIGSTOP, seen)
		frozen, failed = append(frozen, stopped...), append(failed, notStopped...)
		if len(stopped)+len(notStopped) == 0 {
			return frozen, failed, nil
		}
		if running = settle(frozen, deadline); len(running) > 0 {
			return frozen, failed, running
		}
	}
}

// settle waits until each of procs has stopped, exited, or sleeps in the
// kernel (D: it stops before it returns to run anything), or until the
// deadline; it returns those still running then.
func settle(procs []Proc, deadline time.Time) []Proc {
	pending := append([]Proc(nil), procs...)
	pause := 20 * time.Microsecond
	for {
		left := pending[:0]
		for _, p := range pending {
			if now, ok := Read(p.Pid); ok && now.Start == p.Start && !settled(now.State) {
				left = append(left, p)
			}
		}
		pending = left
		if len(pending) == 0 || !time.Now().Before(deadline) {
			return pending
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Millisecond)
	}
}

// settled reports whether a process in state can no longer fork or reap
// until it is signalled again: stopped (T, t), exited (Z, X), or asleep
// in the kernel (D).
func settled(state byte) bool {
	switch state {
	case 'T', 't', 'Z', 'X', 'x', 'D':
		return true
	}
	return false
}

// others is procs without self and without those already fully gone (X).
func others(procs []Proc, self int) []Proc {
	out := procs[:0]
	for _, p := range procs {
		if p.Pid != self && p.State != 'X' {
			out = append(out, p)
		}
	}
	return out
}

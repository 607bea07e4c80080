package reaper

import (
	"os"
	"syscall"
	"time"

	"github.com/light-fabric/lfinit/forward"
)

// FreezeWait bounds how long KillTree waits for the tree to stop before
// it kills what it may. A stopped process has to be scheduled once to
// stop: microseconds on an idle machine, tens of milliseconds on a
// crowded one. The wait is short so that the kill keeps to its deadline:
// a process still running then is killed all the same, and only its
// children wait (stopped) for the next round.
const FreezeWait = 5 * time.Millisecond

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
// process group is stopped first, the cheapest reach. The tree is then
// read (as PID 1 the namespace's /proc, anywhere else the walk down from
// lfinit), each process stopped by pid as it is found, and read again
// until a read finds no process it had not stopped: its cost is the
// tree's. Not kill(-1), even as PID 1: the kernel looks at every process
// of the host for it (5-10 ms beside 15,000 processes, more on a crowded
// machine), and the kill must keep to its deadline.
func KillTree(pid1 bool, group int, hold bool) Signalled {
	deadline := time.Now().Add(FreezeWait)
	if group > 1 {
		forward.Deliver(group, forward.Group, syscall.SIGSTOP)
		forward.Deliver(group, forward.Child, syscall.SIGSTOP)
	}
	frozen, failed, running := freeze(pid1, os.Getpid(), deadline)
	out := Signalled{Failed: failed, Unsettled: len(running)}
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

// freeze stops every live process of the tree, reading it again once
// those it found have stopped, until a read finds none it had not
// stopped, or the deadline passes with some still running: then frozen
// is all of the tree, and nothing in it but the running can change it.
func freeze(pid1 bool, self int, deadline time.Time) (frozen []Proc, failed []Failure, running []Proc) {
	seen := map[Proc]bool{}
	for {
		stopped, notStopped := signalUnseen(pid1, self, syscall.SIGSTOP, seen)
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
// deadline; it returns those still running then. It polls without
// sleeping: a sleeping loop could wake long after the deadline on a
// crowded machine (its goroutine queued behind others), and the deadline
// is a few milliseconds of one core.
func settle(procs []Proc, deadline time.Time) []Proc {
	pending := append([]Proc(nil), procs...)
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

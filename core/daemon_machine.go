package core

import (
	"syscall"
	"time"

	"github.com/light-fabric/lfinit/exitcode"
)

// Daemon says what lfinit follows once the start command exits 0.
type Daemon int

// The ways of following a service that daemonizes.
const (
	DaemonNone    Daemon = iota // the child is the service: its exit ends the run
	DaemonPidfile               // --pidfile: the process named in the file becomes the main process
	DaemonTree                  // --wait-for=tree: the service lasts while any process of the tree lives
)

// Defaults of the pidfile wait; when it finds nothing the run exits
// exitcode.NoPidfile.
const (
	PidfileTimeoutDefault = 5 * time.Second
	PidfilePollEvery      = 20 * time.Millisecond
)

// daemonState is what the machine knows about a service that daemonizes.
type daemonState struct {
	gated     bool      // readiness is gated on a check (--ready-*)
	readySeen bool      // the check passed before the daemon was adopted
	adopted   bool      // the process named in the pidfile is the main process
	tree      bool      // the main "process" is the whole tree (after the start command exited 0)
	awaiting  bool      // waiting for the pidfile (tree is true meanwhile)
	deadline  time.Time // when the wait for the pidfile ends
	nextRead  time.Time
	problem   string // what the last read of the pidfile found wrong
	lastCode  int    // the start command's code, then the last reaped process's (tree mode)
}

// forwardAction is a forward of sig to the main process, or to the whole tree when
// that is the main process.
func (m *Machine) forwardAction(sig syscall.Signal, why string) Action {
	return Action{Kind: ActForward, Signal: sig, Why: why, Tree: m.daemon.tree}
}

// FollowsTree reports whether signals now go to every process of the tree
// (the start command exited 0 under --wait-for=tree, or the pidfile is
// still awaited).
func (m *Machine) FollowsTree() bool { return m.daemon.tree && m.alive }

// startCommandExited handles the start command's exit in the daemon modes;
// ok is false when it is an ordinary exit of the main process.
func (m *Machine) startCommandExited(now time.Time, code int, treeEmpty bool) ([]Action, bool) {
	if m.opt.Daemon == DaemonNone || m.daemon.adopted || code != 0 {
		return nil, false
	}
	m.daemon.lastCode = code
	switch {
	case m.opt.Daemon == DaemonTree && !treeEmpty:
		m.daemon.tree = true
		var acts []Action
		if m.stopSent {
			// The stop signal reached the start command only: the rest
			// of the tree gets it now.
			acts = append(acts, m.forwardAction(m.stopSig, "stop"))
		}
		return m.advance(now, acts), true
	case m.opt.Daemon != DaemonPidfile || m.shutdown:
		return nil, false // the start was aborted, or nothing is left: as usual
	case treeEmpty:
		m.alive = false
		return m.pidfileFailed(now, "was not read: the start command exited 0 and left no process to follow", true), true
	}
	m.daemon.tree, m.daemon.awaiting = true, true
	m.daemon.deadline, m.daemon.nextRead = now.Add(m.opt.PidfileTimeout), now
	m.daemon.problem = "was not read yet"
	return m.advance(now, nil), true
}

// readDue asks for a read of the pidfile, and schedules the next one no
// later than the deadline, so the last read happens at the deadline.
func (m *Machine) readDue(now time.Time, acts []Action) []Action {
	next := now.Add(m.opt.PidfilePoll)
	if next.After(m.daemon.deadline) && now.Before(m.daemon.deadline) {
		next = m.daemon.deadline
	}
	m.daemon.nextRead = next
	return append(acts, Action{Kind: ActReadPidfile})
}

// PidfileChecked records that a read of the pidfile at now found problem;
// after the deadline, that ends the wait.
func (m *Machine) PidfileChecked(now time.Time, problem string) []Action {
	if !m.daemon.awaiting || m.done {
		return nil
	}
	m.daemon.problem = problem
	if now.Before(m.daemon.deadline) {
		return nil
	}
	return m.pidfileFailed(now, problem, false)
}

// Adopt records that the loop found, at now, a process to follow in the
// pidfile: it is the main process from now on. Without readiness gating
// (or once the check passed) it is ready.
func (m *Machine) Adopt(now time.Time) []Action {
	if !m.daemon.awaiting || m.done {
		return nil
	}
	m.daemon.awaiting, m.daemon.tree, m.daemon.adopted = false, false, true
	if !m.daemon.gated || m.daemon.readySeen {
		return m.setPhase(nil, Ready)
	}
	return nil
}

// OtherExited records the code of a reaped process other than the main
// one: under --wait-for=tree the last one is the run's exit code.
func (m *Machine) OtherExited(code int) {
	if m.daemon.tree && m.alive {
		m.daemon.lastCode = code
	}
}

// pidfileFailed ends the wait for the pidfile: lfinit exits 1 (failed)
// once the leftovers are cleaned up, as after the child's own exit.
func (m *Machine) pidfileFailed(now time.Time, problem string, treeEmpty bool) []Action {
	m.daemon.awaiting, m.daemon.tree, m.alive = false, false, false
	m.outcome, m.code = Failed, exitcode.NoPidfile
	acts := []Action{{Kind: ActPidfileFailed, Why: problem}}
	if treeEmpty {
		return append(acts, m.enterStopped()...)
	}
	m.cleanupAt = m.opt.Budget.CleanupDeadline(now)
	acts = m.setPhase(acts, CleaningUp)
	acts = append(acts, Action{Kind: ActTermTree, Signal: syscall.SIGTERM})
	return m.advance(now, acts)
}

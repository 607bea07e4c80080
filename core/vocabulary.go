package core

// The vocabulary of the machine, published as is by statusfile, metrics
// and the termination message: where a run is (Phase), how it ended
// (Outcome), how its shutdown hook went (HookOutcome), and why its child
// ended (Cause).

// Phase is where lfinit is in the life of its child.
type Phase string

// The phases, as lfinit(1) lists them under PHASES.
const (
	Starting        Phase = "starting"
	Ready           Phase = "ready"
	Quiescing       Phase = "quiescing"
	Draining        Phase = "draining"
	AbortingStartup Phase = "aborting-startup"
	CleaningUp      Phase = "cleaning-up"
	Stopped         Phase = "stopped"
)

// Phases lists every phase, in lifecycle order.
var Phases = []Phase{Starting, Ready, Quiescing, Draining, AbortingStartup, CleaningUp, Stopped}

// Outcome is how the run ended; empty while it runs.
type Outcome string

// The outcomes, as lfinit(1) lists them under EXIT STATUS.
const (
	Running          Outcome = ""
	ChildExited      Outcome = "child-exited"
	Graceful         Outcome = "graceful"
	DeadlineExceeded Outcome = "deadline-exceeded"
	Failed           Outcome = "failed"
)

// Outcomes lists every final outcome.
var Outcomes = []Outcome{ChildExited, Graceful, DeadlineExceeded, Failed}

// HookOutcome is how the shutdown hook (--on-shutdown) went.
type HookOutcome string

// The hook's outcomes, as lfinit(1) lists them under STATUS FILE.
const (
	HookRunning   HookOutcome = "running"
	HookSucceeded HookOutcome = "succeeded" // exited 0
	HookFailed    HookOutcome = "failed"    // exited non-zero, died by a signal, or could not start
	HookTimedOut  HookOutcome = "timed-out" // killed at --on-shutdown-timeout
	HookCutShort  HookOutcome = "cut-short" // killed by a second shutdown signal
)

// HookOutcomes lists every outcome of a hook that ended.
var HookOutcomes = []HookOutcome{HookSucceeded, HookFailed, HookTimedOut, HookCutShort}

// Cause is why the child ended: what its exit status alone cannot say.
type Cause string

// The causes, as lfinit(1) lists them under STATUS FILE.
const (
	// CauseExited: it ended by itself, with an exit status or by a signal
	// other than SIGKILL (its own crash, or its answer to a signal).
	CauseExited Cause = "exited"
	// CauseDeadline: lfinit's own SIGKILL at the hard deadline.
	CauseDeadline Cause = "deadline"
	// CauseOOMKill: a SIGKILL lfinit did not send, and the memory
	// cgroup's OOM kill counter grew meanwhile: the kernel's OOM killer.
	CauseOOMKill Cause = "oom-kill"
	// CauseKilledFromOutside: a SIGKILL lfinit did not send, with no OOM
	// kill counted (kill -9 by another process, the engine, the kernel).
	CauseKilledFromOutside Cause = "killed-from-outside"
	// CauseUnknown: a SIGKILL lfinit did not send, and no OOM kill counter
	// could be read to tell which.
	CauseUnknown Cause = "unknown"
)

// Causes lists every cause.
var Causes = []Cause{CauseExited, CauseDeadline, CauseOOMKill, CauseKilledFromOutside, CauseUnknown}

// Package statusfile is the shape of lfinit's published state and the files
// it is published in: the status file, replaced atomically at every phase
// transition, and the Kubernetes termination message written at exit.
package statusfile

import "time"

// Version is the schema version written in every status file. Keys may be
// added within a version, never renamed or removed.
const Version = 1

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

// Status is one snapshot of lfinit's state, as written to the status file.
// Pointers are null until known. Times are UTC, RFC 3339 with nanoseconds.
type Status struct {
	Version          int        `json:"version"`
	Phase            Phase      `json:"phase"`
	Ready            bool       `json:"ready"`
	Outcome          *Outcome   `json:"outcome"`
	ExitCode         *int       `json:"exit_code"`
	Reason           *string    `json:"reason"` // terminate, interrupt, hangup… or child-exit
	Signal           *string    `json:"signal"` // the first shutdown signal, e.g. SIGTERM
	Pid              int        `json:"pid"`
	ChildPid         *int       `json:"child_pid"`
	StartedAt        *time.Time `json:"started_at"`
	ReadyAt          *time.Time `json:"ready_at"`
	SignalAt         *time.Time `json:"signal_at"`
	GraceDeadline    *time.Time `json:"grace_deadline"`
	HardDeadline     *time.Time `json:"hard_deadline"`
	PhaseSince       time.Time  `json:"phase_since"`
	UpdatedAt        time.Time  `json:"updated_at"`
	RemainingSeconds *float64   `json:"remaining_seconds"` // to the hard deadline, when one is set
	Killed           int        `json:"killed"`            // processes SIGKILLed
	Reaped           int        `json:"reaped"`            // processes reaped
	StillRunning     []string   `json:"still_running"`     // what the hard deadline killed, "name[pid]"
	// Who wrote the file, so a reader can tell a stale file from a live
	// one even after the pid is recycled: the writer's PID namespace
	// (readlink /proc/self/ns/pid) and start time (field 22 of /proc/PID/stat).
	PidNamespace  *string `json:"pid_namespace"`
	PidStartTicks *uint64 `json:"pid_start_ticks"`
	// NotSignalled counts the processes of the tree a signal could not reach.
	NotSignalled int `json:"not_signalled"`
	// TreeMethod is how lfinit finds and signals its tree: "kill-1" as
	// PID 1, else "children" (each process's children lists) or
	// "proc-scan" (a kernel without them).
	TreeMethod string `json:"tree_method"`
	// ReadyError is why the last readiness attempt failed (--ready-tcp,
	// --ready-http), e.g. "127.0.0.1:8080 refuses connections"; null
	// without a check and once it passed.
	ReadyError *string `json:"ready_error"`
	// The shutdown hook (--on-shutdown), null until it starts: how it
	// went, its exit code (128+N for signal N, 126/127 when it could not
	// start) and its run time, both null until it is reaped.
	HookOutcome         *HookOutcome `json:"hook_outcome"`
	HookExitCode        *int         `json:"hook_exit_code"`
	HookDurationSeconds *float64     `json:"hook_duration_seconds"`
	// Why the child ended, null until it did (and when it never started).
	Cause *Cause `json:"cause"`
	// What the child cost, from its exit status's resource usage: peak
	// resident set and CPU time (user, system); null until it is reaped.
	ChildPeakRSSBytes  *uint64  `json:"child_peak_rss_bytes"`
	ChildUserSeconds   *float64 `json:"child_user_seconds"`
	ChildSystemSeconds *float64 `json:"child_system_seconds"`
	// What the whole tree cost, every process lfinit reaped together (CPU
	// added up, the largest peak RSS of any); null until lfinit stops.
	TreePeakRSSBytes *uint64  `json:"tree_peak_rss_bytes"`
	TreeCPUSeconds   *float64 `json:"tree_cpu_seconds"`
	// The memory cgroup's limit (null: none) and peak usage, read when the
	// child was SIGKILLed by someone other than lfinit.
	MemoryLimitBytes *uint64 `json:"memory_limit_bytes"`
	MemoryPeakBytes  *uint64 `json:"memory_peak_bytes"`
}

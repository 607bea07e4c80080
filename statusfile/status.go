// Package statusfile is the shape of lfinit's published state and the file
// it is published in, replaced atomically at every phase transition, with
// the writer's identity in it so that readers can tell a stale file.
package statusfile

import (
	"strconv"
	"time"

	"github.com/light-fabric/lfinit/core"
)

// Version is the schema version written in every status file. Keys may be
// added within a version, never renamed or removed.
const Version = 1

// The vocabulary lives in core, lfinit's pure decision core; these are its names here.
type (
	Phase       = core.Phase
	Outcome     = core.Outcome
	HookOutcome = core.HookOutcome
	Cause       = core.Cause
)

// The phases, outcomes, hook outcomes and causes (see core).
const (
	Starting        = core.Starting
	Ready           = core.Ready
	Quiescing       = core.Quiescing
	Draining        = core.Draining
	AbortingStartup = core.AbortingStartup
	CleaningUp      = core.CleaningUp
	Stopped         = core.Stopped

	Running          = core.Running
	ChildExited      = core.ChildExited
	Graceful         = core.Graceful
	DeadlineExceeded = core.DeadlineExceeded
	Failed           = core.Failed

	HookRunning   = core.HookRunning
	HookSucceeded = core.HookSucceeded
	HookFailed    = core.HookFailed
	HookTimedOut  = core.HookTimedOut
	HookCutShort  = core.HookCutShort

	CauseExited            = core.CauseExited
	CauseDeadline          = core.CauseDeadline
	CauseOOMKill           = core.CauseOOMKill
	CauseKilledFromOutside = core.CauseKilledFromOutside
	CauseUnknown           = core.CauseUnknown
)

// Every phase, outcome, hook outcome and cause, as core lists them.
var (
	Phases       = core.Phases
	Outcomes     = core.Outcomes
	HookOutcomes = core.HookOutcomes
	Causes       = core.Causes
)

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
	// The service's own word over the notify protocol (--ready-notify),
	// null without it: the state it last declared (starting, ready,
	// reloading, stopping), its last STATUS= line (cut, control characters
	// made spaces) and its last ERRNO=.
	ServiceState  *string `json:"service_state"`
	ServiceStatus *string `json:"service_status"`
	ServiceErrno  *int    `json:"service_errno"`
	// WatchdogMissedAt is when the service's watchdog (--watchdog) was
	// missed, an interval without WATCHDOG=1 (or WATCHDOG=trigger): lfinit
	// is then not live. Null while it is fed, and without a watchdog.
	WatchdogMissedAt *time.Time `json:"watchdog_missed_at"`
	// ServiceExtendSeconds is the last EXTEND_TIMEOUT_USEC= the service
	// sent, in seconds: published, never acted on (the budget only
	// shortens).
	ServiceExtendSeconds *float64 `json:"service_extend_timeout_seconds"`
	// ServiceBusError is the last BUSERROR= the service sent (a D-Bus
	// error name, cut, control characters made spaces): null until sent.
	ServiceBusError *string `json:"service_buserror"`
	// Who sent the first shutdown signal, null without one: "process" (a
	// process in lfinit's PID namespace: its pid, uid and, when it still
	// ran when lfinit looked, its command), "outside-pid-namespace" (pid 0
	// to lfinit: the engine, the kubelet's runtime, the host; its uid),
	// "kernel" (e.g. a terminal's hangup) or "unknown" (not recorded).
	SignalSender        *string `json:"signal_sender"`
	SignalSenderPid     *int    `json:"signal_sender_pid"`
	SignalSenderUid     *uint32 `json:"signal_sender_uid"`
	SignalSenderCommand *string `json:"signal_sender_command"`
}

// SenderName is who sent the first shutdown signal, in a word: the
// command and pid ("bash[42]", or "pid 42" when its command is not known)
// of a process lfinit can see, otherwise the kind; "" without a signal.
func (s Status) SenderName() string {
	switch {
	case s.SignalSender == nil:
		return ""
	case s.SignalSenderPid == nil:
		return *s.SignalSender
	case s.SignalSenderCommand != nil:
		return *s.SignalSenderCommand + "[" + strconv.Itoa(*s.SignalSenderPid) + "]"
	}
	return "pid " + strconv.Itoa(*s.SignalSenderPid)
}

// Package exitcode declares, once, the exit codes lfinit itself decides;
// every other code it exits with is the child's, passed on.
package exitcode

const (
	// Forced is a run's exit when lfinit forced the stop: the grace
	// deadline passed, or the tree had to be SIGKILLed.
	Forced = 1
	// Failed is a subcommand's "no": not ready, not live, a budget that
	// does not fit, a status file that cannot be read.
	Failed = 1
	// NoPidfile is a run whose --pidfile named no process lfinit could
	// follow: the service is not running, so not 0.
	NoPidfile = 1
	// UnknownWait is a wait status that is neither an exit nor a death by
	// signal (a stop or a continue, which wait4 without WUNTRACED never
	// returns): not 0, so never read as success.
	UnknownWait = 1
	// Usage is a bad option, variable or value: nothing was started.
	Usage = 2
	// NotExec is a command that exists but cannot be executed (as a shell has it).
	NotExec = 126
	// NotFound is a command that does not exist (as a shell has it).
	NotFound = 127
	// SignalBase+N is the exit of a child killed by signal N (as a shell has it).
	SignalBase = 128
)

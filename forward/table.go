package forward

import "syscall"

// Handling is what lfinit does with a signal that reaches it.
type Handling int

// The ways lfinit handles a signal; every signal 1…RTMax has exactly one.
const (
	Relay       Handling = iota // caught and passed on to the child (or its group)
	Reap                        // SIGCHLD: caught, wakes the reaper, never relayed
	Drop                        // caught and dropped: it concerns lfinit itself
	Runtime                     // the Go runtime handles and drops it: cannot be relayed
	Uncaught                    // the Go runtime installs no handler: set to ignored once the child runs
	Uncatchable                 // SIGKILL and SIGSTOP: the kernel acts, nobody can catch them
)

// Entry is one row of the signal table: one signal and why it is handled so.
type Entry struct {
	Sig      syscall.Signal
	Handling Handling
	// Shutdown marks the default shutdown signals (--shutdown-signals).
	Shutdown bool
	// Urgent marks the signals whose Go default ends or stops lfinit before
	// it catches them (exit 2, a stack dump, a stop), so they are caught
	// first; the runtime drops every other one until it is caught.
	Urgent bool
	Why    string
}

// Table lists every signal lfinit can receive and what it does with it, as
// catatonit's kernel_signals[] does: the one list to audit. Everything else
// (what is caught, what is relayed, the default shutdown signals) is read
// from it.
var Table = append(append([]Entry{
	{syscall.SIGHUP, Relay, false, true, "hangup: a reload for many daemons"},
	{syscall.SIGINT, Relay, true, true, "interrupt (Ctrl-C): starts the bounded shutdown"},
	{syscall.SIGQUIT, Relay, false, true, "quit: nginx's graceful stop"},
	{syscall.SIGILL, Relay, false, true, "fault: relayed when a process sends it; a real fault in lfinit still crashes it"},
	{syscall.SIGTRAP, Relay, false, true, "fault: relayed when a process sends it; a real fault in lfinit still crashes it"},
	{syscall.SIGABRT, Relay, false, true, "abort: asks the child for a core dump"},
	{syscall.SIGBUS, Relay, false, true, "fault: relayed when a process sends it; a real fault in lfinit still crashes it"},
	{syscall.SIGFPE, Relay, false, true, "fault: relayed when a process sends it; a real fault in lfinit still crashes it"},
	{syscall.SIGKILL, Uncatchable, false, false, "cannot be caught: the kernel kills lfinit (as PID 1, the whole namespace)"},
	{syscall.SIGUSR1, Relay, false, false, "user-defined"},
	{syscall.SIGSEGV, Relay, false, true, "fault: relayed when a process sends it; a real fault in lfinit still crashes it"},
	{syscall.SIGUSR2, Relay, false, false, "user-defined"},
	{syscall.SIGPIPE, Drop, false, true, "a write to lfinit's own broken stderr; the child's pipes are its own"},
	{syscall.SIGALRM, Relay, false, false, "timer"},
	{syscall.SIGTERM, Relay, true, true, "terminate: the engine's stop, starts the bounded shutdown"},
	{syscall.SIGCHLD, Reap, false, false, "a child changed state: lfinit reaps, never relays"},
	{syscall.SIGCONT, Relay, false, false, "job control: continue (the kernel also resumes lfinit)"},
	{syscall.SIGSTOP, Uncatchable, false, false, "cannot be caught: the kernel stops lfinit (ignored for PID 1)"},
	{syscall.SIGTSTP, Relay, false, true, "job control: terminal stop"},
	{syscall.SIGTTIN, Relay, false, true, "job control: background read from the terminal"},
	{syscall.SIGTTOU, Relay, false, true, "job control: background write to the terminal"},
	{syscall.SIGURG, Runtime, false, false, "the Go runtime's preemption signal: dozens a second, never relayed"},
	{syscall.SIGXCPU, Relay, false, false, "CPU time limit"},
	{syscall.SIGXFSZ, Relay, false, false, "file size limit"},
	{syscall.SIGVTALRM, Relay, false, false, "virtual timer"},
	{syscall.SIGPROF, Runtime, false, false, "the Go runtime's profiler takes it and drops it"},
	{syscall.SIGWINCH, Relay, false, false, "window size change; httpd's graceful stop"},
	{syscall.SIGIO, Relay, false, false, "I/O possible"},
	{syscall.SIGPWR, Relay, false, false, "power failure"},
	{syscall.SIGSYS, Relay, false, true, "fault: relayed when a process sends it; a real fault in lfinit still crashes it"},
	{32, Uncaught, false, false, "glibc's SIGCANCEL: the Go runtime installs no handler"},
	{33, Runtime, false, false, "glibc's SIGSETXID: the Go runtime uses it for its own per-thread system calls"},
	{RTMin, Uncaught, false, false, "SIGRTMIN, musl's SIGSYNCCALL: the Go runtime installs no handler"},
}, archSignals...), realtime()...)

// realtime is SIGRTMIN+1 … SIGRTMAX: all relayed.
func realtime() []Entry {
	var rt []Entry
	for n := RTMin + 1; n <= RTMax; n++ {
		rt = append(rt, Entry{syscall.Signal(n), Relay, false, false, "real-time: relayed, though queued instances of one number may merge"})
	}
	return rt
}

// Relayed is every signal lfinit catches and passes on to the child.
var Relayed = with(func(e Entry) bool { return e.Handling == Relay })

// Caught is every signal lfinit installs a handler for: the relayed ones,
// SIGCHLD and the dropped ones.
var Caught = with(func(e Entry) bool { return e.Handling == Relay || e.Handling == Reap || e.Handling == Drop })

// Urgent is the part of Caught to catch first.
var Urgent = with(func(e Entry) bool { return e.Urgent })

// DefaultShutdown is the default of --shutdown-signals.
var DefaultShutdown = with(func(e Entry) bool { return e.Shutdown })

// Unrelayable are the signals with no Go handler, whose default action
// would kill lfinit when it is not PID 1 (see IgnoreUnrelayable).
var Unrelayable = with(func(e Entry) bool { return e.Handling == Uncaught })

// relayed indexes Relayed by signal number: IsRelayed is asked for every
// signal lfinit receives, before it is forwarded.
var relayed = func() (r [RTMax + 1]bool) {
	for _, sig := range Relayed {
		r[sig] = true
	}
	return r
}()

// IsRelayed reports whether sig is one lfinit catches and passes on.
func IsRelayed(sig syscall.Signal) bool {
	return sig > 0 && int(sig) <= RTMax && relayed[sig]
}

func with(keep func(Entry) bool) []syscall.Signal {
	var out []syscall.Signal
	for _, e := range Table {
		if keep(e) {
			out = append(out, e.Sig)
		}
	}
	return out
}

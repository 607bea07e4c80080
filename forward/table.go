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

// Entry is one row of the signal table: one signal, every fact lfinit
// keeps about it, and why it is handled so.
type Entry struct {
	Sig syscall.Signal
	// Name is the signal's conventional name (SIGTERM); "" for the
	// numbered ones, which Name writes SIGRTMIN+N or SIG32.
	Name     string
	Handling Handling
	// Shutdown marks the default shutdown signals (--shutdown-signals).
	Shutdown bool
	// Urgent marks the signals whose Go default ends or stops lfinit before
	// it catches them (exit 2, a stack dump, a stop), so they are caught
	// first; the runtime drops every other one until it is caught.
	Urgent bool
	// Common marks the signals operators and orchestrators send most:
	// their counters exist from the first scrape.
	Common bool
	// Reason is the word the status file and the logs use when a shutdown
	// begins on the signal; "" for the name in lower case, without SIG.
	Reason string
	Why    string
}

// Table lists every signal lfinit can receive and what it does with it, as
// catatonit's kernel_signals[] does: the one list to audit. Everything else
// (what is caught, what is relayed, the default shutdown signals) is read
// from it.
var Table = append(append([]Entry{
	{Sig: syscall.SIGHUP, Name: "SIGHUP", Handling: Relay, Urgent: true, Common: true, Reason: "hangup", Why: "hangup: a reload for many daemons"},
	{Sig: syscall.SIGINT, Name: "SIGINT", Handling: Relay, Shutdown: true, Urgent: true, Common: true, Reason: "interrupt", Why: "interrupt (Ctrl-C): starts the bounded shutdown"},
	{Sig: syscall.SIGQUIT, Name: "SIGQUIT", Handling: Relay, Urgent: true, Common: true, Reason: "quit", Why: "quit: nginx's graceful stop"},
	{Sig: syscall.SIGILL, Name: "SIGILL", Handling: Relay, Urgent: true, Why: "fault: relayed when a process sends it; a real fault in lfinit still crashes it"},
	{Sig: syscall.SIGTRAP, Name: "SIGTRAP", Handling: Relay, Urgent: true, Why: "fault: relayed when a process sends it; a real fault in lfinit still crashes it"},
	{Sig: syscall.SIGABRT, Name: "SIGABRT", Handling: Relay, Urgent: true, Why: "abort: asks the child for a core dump"},
	{Sig: syscall.SIGBUS, Name: "SIGBUS", Handling: Relay, Urgent: true, Why: "fault: relayed when a process sends it; a real fault in lfinit still crashes it"},
	{Sig: syscall.SIGFPE, Name: "SIGFPE", Handling: Relay, Urgent: true, Why: "fault: relayed when a process sends it; a real fault in lfinit still crashes it"},
	{Sig: syscall.SIGKILL, Name: "SIGKILL", Handling: Uncatchable, Why: "cannot be caught: the kernel kills lfinit (as PID 1, the whole namespace)"},
	{Sig: syscall.SIGUSR1, Name: "SIGUSR1", Handling: Relay, Common: true, Reason: "user1", Why: "user-defined"},
	{Sig: syscall.SIGSEGV, Name: "SIGSEGV", Handling: Relay, Urgent: true, Why: "fault: relayed when a process sends it; a real fault in lfinit still crashes it"},
	{Sig: syscall.SIGUSR2, Name: "SIGUSR2", Handling: Relay, Common: true, Reason: "user2", Why: "user-defined"},
	{Sig: syscall.SIGPIPE, Name: "SIGPIPE", Handling: Drop, Urgent: true, Why: "a write to lfinit's own broken stderr; the child's pipes are its own"},
	{Sig: syscall.SIGALRM, Name: "SIGALRM", Handling: Relay, Reason: "alarm", Why: "timer"},
	{Sig: syscall.SIGTERM, Name: "SIGTERM", Handling: Relay, Shutdown: true, Urgent: true, Common: true, Reason: "terminate", Why: "terminate: the engine's stop, starts the bounded shutdown"},
	{Sig: syscall.SIGCHLD, Name: "SIGCHLD", Handling: Reap, Why: "a child changed state: lfinit reaps, never relays"},
	{Sig: syscall.SIGCONT, Name: "SIGCONT", Handling: Relay, Why: "job control: continue (the kernel also resumes lfinit)"},
	{Sig: syscall.SIGSTOP, Name: "SIGSTOP", Handling: Uncatchable, Why: "cannot be caught: the kernel stops lfinit (ignored for PID 1)"},
	{Sig: syscall.SIGTSTP, Name: "SIGTSTP", Handling: Relay, Urgent: true, Why: "job control: terminal stop"},
	{Sig: syscall.SIGTTIN, Name: "SIGTTIN", Handling: Relay, Urgent: true, Why: "job control: background read from the terminal"},
	{Sig: syscall.SIGTTOU, Name: "SIGTTOU", Handling: Relay, Urgent: true, Why: "job control: background write to the terminal"},
	{Sig: syscall.SIGURG, Name: "SIGURG", Handling: Runtime, Why: "the Go runtime's preemption signal: dozens a second, never relayed"},
	{Sig: syscall.SIGXCPU, Name: "SIGXCPU", Handling: Relay, Why: "CPU time limit"},
	{Sig: syscall.SIGXFSZ, Name: "SIGXFSZ", Handling: Relay, Why: "file size limit"},
	{Sig: syscall.SIGVTALRM, Name: "SIGVTALRM", Handling: Relay, Why: "virtual timer"},
	{Sig: syscall.SIGPROF, Name: "SIGPROF", Handling: Runtime, Why: "the Go runtime's profiler takes it and drops it"},
	{Sig: syscall.SIGWINCH, Name: "SIGWINCH", Handling: Relay, Common: true, Reason: "window-change", Why: "window size change; httpd's graceful stop"},
	{Sig: syscall.SIGIO, Name: "SIGIO", Handling: Relay, Why: "I/O possible"},
	{Sig: syscall.SIGPWR, Name: "SIGPWR", Handling: Relay, Reason: "power-failure", Why: "power failure"},
	{Sig: syscall.SIGSYS, Name: "SIGSYS", Handling: Relay, Urgent: true, Why: "fault: relayed when a process sends it; a real fault in lfinit still crashes it"},
	{Sig: 32, Handling: Uncaught, Why: "glibc's SIGCANCEL: the Go runtime installs no handler"},
	{Sig: 33, Handling: Runtime, Why: "glibc's SIGSETXID: the Go runtime uses it for its own per-thread system calls"},
	{Sig: RTMin, Handling: Uncaught, Why: "SIGRTMIN, musl's SIGSYNCCALL: the Go runtime installs no handler"},
}, archSignals...), realtime()...)

// realtime is SIGRTMIN+1 … SIGRTMAX: all relayed.
func realtime() []Entry {
	var rt []Entry
	for n := RTMin + 1; n <= RTMax; n++ {
		rt = append(rt, Entry{Sig: syscall.Signal(n), Handling: Relay, Why: "real-time: relayed, though queued instances of one number may merge"})
	}
	return rt
}

// Common is every signal operators and orchestrators send most.
var Common = signalsWhere(func(e Entry) bool { return e.Common })

// names and reasons index the table's Name and Reason by signal number
// ("" where it has none): arrays, not maps, so that lfinit's start builds
// no map for them.
var names, reasons = index()

func index() (names, reasons [RTMax + 1]string) {
	for _, e := range Table {
		names[e.Sig], reasons[e.Sig] = e.Name, e.Reason
	}
	return names, reasons
}

// lookup is index[sig], "" for a number out of its range.
func lookup(index *[RTMax + 1]string, sig syscall.Signal) string {
	if sig < 0 || int(sig) > RTMax {
		return ""
	}
	return index[sig]
}

// Relayed is every signal lfinit catches and passes on to the child.
var Relayed = signalsWhere(func(e Entry) bool { return e.Handling == Relay })

// Caught is every signal lfinit installs a handler for: the relayed ones,
// SIGCHLD and the dropped ones.
var Caught = signalsWhere(func(e Entry) bool { return e.Handling == Relay || e.Handling == Reap || e.Handling == Drop })

// Urgent is the part of Caught to catch first.
var Urgent = signalsWhere(func(e Entry) bool { return e.Urgent })

// DefaultShutdown is the default of --shutdown-signals.
var DefaultShutdown = signalsWhere(func(e Entry) bool { return e.Shutdown })

// Unrelayable are the signals with no Go handler, whose default action
// would kill lfinit when it is not PID 1 (see IgnoreUnrelayable).
var Unrelayable = signalsWhere(func(e Entry) bool { return e.Handling == Uncaught })

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

// signalsWhere is the signals of the table whose row keep accepts, in order.
func signalsWhere(keep func(Entry) bool) []syscall.Signal {
	var out []syscall.Signal
	for _, e := range Table {
		if keep(e) {
			out = append(out, e.Sig)
		}
	}
	return out
}

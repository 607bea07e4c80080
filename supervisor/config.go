package supervisor

import (
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/notify"
	"github.com/light-fabric/lfinit/readiness"
	"github.com/light-fabric/lfinit/statusfile"
)

// Config is what Run needs: the machine's options (core.Options) plus the wiring.
type Config struct {
	core.Options
	Argv   []string       // the command and its arguments
	Env    []string       // the child's environment
	Target forward.Target // who gets forwarded signals
	PID1   bool           // lfinit is its PID namespace's init
	Log    *slog.Logger
	// PreserveFDs is how many inherited descriptors from 3 up the child gets.
	PreserveFDs int
	// Recorder, when set, is told of every event; Publishers get a
	// snapshot at every transition.
	Recorder   Recorder
	Publishers []Publish
	// Readiness, when set, gates the ready phase on the child answering.
	Readiness *readiness.Check
	// Signals are lfinit's caught signals (CaughtSignals), caught before
	// the child starts; Run refuses to start one without them.
	Signals *Signals
	// WarnOnReap logs at WARN every reaped process other than the child (tini -w).
	WarnOnReap bool
	// Credential, when set, is the child's uid, gid and groups (--user).
	Credential *syscall.Credential
	// Hook is the shutdown hook's command (--on-shutdown), nil for none;
	// Options.Budget.Hook is its timeout.
	Hook []string
	// Notify, when set, is the notify socket (--ready-notify) the child
	// was told of: READY=1 gates the ready phase, and the service's
	// STOPPING=1, RELOADING=1 and STATUS= are published.
	Notify *notify.Listener
	// Watchdog is the interval within which the service must send
	// WATCHDOG=1 (--watchdog, with Notify), 0 for none; a miss makes
	// lfinit not live, and with WatchdogStop begins its shutdown.
	Watchdog     time.Duration
	WatchdogStop bool
	// Rehearse, when set, is given at idle a result like a stop's, for
	// the caller to take its final records' path into nowhere: a stop then
	// does not fault that code back in between the child's exit and
	// lfinit's.
	Rehearse func(Result)
}

// Signals are lfinit's caught signals, queued until the loop reads them.
type Signals struct {
	relayed chan os.Signal // every other caught signal (forward.Caught)
	chld    chan os.Signal // SIGCHLD: its own one-slot channel, so a storm of
	// other signals can never crowd out a reap
}

// CaughtSignals wraps channels that already receive forward.Caught: SIGCHLD
// on sigchld, the rest on relayed; caught before Run was called.
func CaughtSignals(relayed, sigchld chan os.Signal) *Signals {
	return &Signals{relayed: relayed, chld: sigchld}
}

// Recorder is told of each event as it happens, from the loop's
// goroutine (the metrics). Its methods must not block: they sit between a
// signal and its forward, a deadline and its kill.
type Recorder interface {
	SetReady(ready bool) // first, before anything else on a shutdown signal
	SignalReceived(name string)
	SignalForwarded(name string)
	Reaped(n int)
}

// Publish takes a status snapshot at every transition but the last (the
// status file, the metrics' phase): the final one is Result's, which the
// caller writes. It must not block either.
type Publish func(statusfile.Status)

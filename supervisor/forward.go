package supervisor

import (
	"errors"
	"log/slog"
	"syscall"
	"time"

	"github.com/light-fabric/lfinit/budget"
	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/forward"
)

// signal answers a caught signal: forwarded at once, then logged and counted.
func (r *runner) signal(sig syscall.Signal) []core.Action {
	if !forward.IsRelayed(sig) {
		return nil // SIGPIPE: lfinit's own stderr broke; the child's output is its own
	}
	what, first := "relay", false
	switch {
	case r.m.Drops(sig):
		what = "dropped: --rewrite"
	case r.m.IsShutdownSignal(sig) && !r.m.ShuttingDown():
		// Readiness drops before anything else, even the log line.
		r.status.setReady(false)
		what, first = "shutdown", true
	case r.m.IsShutdownSignal(sig):
		what = "hurry"
	case r.reaped && !r.m.FollowsTree():
		what = "dropped: the child has exited"
	}
	if sig == syscall.SIGCONT {
		r.resumeTerminal() // before the relay: the child must find the terminal its own
	}
	now := time.Now()
	// Forward before the bookkeeping: formatting the log line and waking
	// the log writer take tens of microseconds a forward must not wait for.
	acts, sent := r.forwardNow(r.m.Signal(now, sig))
	name := forward.Name(sig)
	if first {
		r.stopFrom.record(sig)
	}
	if r.Recorder != nil {
		r.Recorder.SignalReceived(name)
	}
	if r.logsAt(slog.LevelDebug) {
		r.logReceived(name, what, now, first)
	}
	// What was sent is told after what caused it.
	for _, d := range sent {
		r.report(d.a, d.err)
	}
	return acts
}

// logReceived is the debug line of a received signal.
func (r *runner) logReceived(name, what string, now time.Time, first bool) {
	attrs := []any{"signal", name, "action", what}
	if first {
		attrs = append(attrs, r.stopFrom.attrs()...)
	}
	if hard, ok := r.m.HardDeadline(); ok && r.m.ShuttingDown() {
		attrs = append(attrs, "reason", r.m.Reason(), "hard_deadline", hard.UTC().Format(time.RFC3339Nano), "remaining_seconds", seconds(budget.Left(hard, now)))
	}
	r.Log.Debug("signal received", attrs...)
}

// errChildGone is deliver's answer once the child is reaped: its pid may
// have been recycled, so nothing is sent and nothing is reported.
var errChildGone = errors.New("the child is reaped")

// delivery is a forward carried out, to be reported.
type delivery struct {
	a   core.Action
	err error
}

// forwardNow carries out the forwards among acts at once, in order, and
// returns the other actions for apply and the forwards to report.
func (r *runner) forwardNow(acts []core.Action) ([]core.Action, []delivery) {
	rest := acts[:0]
	var sent []delivery
	for _, a := range acts {
		if a.Kind == core.ActForward {
			sent = append(sent, delivery{a, r.deliver(a)})
			continue
		}
		rest = append(rest, a)
	}
	return rest, sent
}

// forward sends a forwarded signal and reports it.
func (r *runner) forward(a core.Action) { r.report(a, r.deliver(a)) }

// report tells of a forward where it was sent: each error decided there,
// as tini's wait_and_forward_signal does.
func (r *runner) report(a core.Action, err error) {
	if err == errChildGone { // deliver's own sentinel, never wrapped
		return
	}
	name := forward.Name(a.Signal)
	if err != nil {
		r.Log.Warn("cannot forward signal", "signal", name, "target_pid", r.child, "err", err)
		return
	}
	if r.Recorder != nil {
		r.Recorder.SignalForwarded(name)
	}
	// The deadline signal means the child outlived its grace.
	level := slog.LevelDebug
	if a.Why == "deadline" {
		level = slog.LevelWarn
	}
	if a.Why == "relay" || !r.logsAt(level) {
		return
	}
	attrs := []any{"signal", name, "to", r.Target.String(), "target_pid", r.child}
	if a.Tree {
		attrs = []any{"signal", name, "to", "tree"}
	}
	if hard, ok := r.m.HardDeadline(); ok {
		attrs = append(attrs, "remaining_seconds", seconds(budget.Left(hard, time.Now())))
	}
	r.logLine(level, a.Why+" signal sent", attrs...)
}

// deliver sends a forwarded signal to the child, its group, or the tree.
func (r *runner) deliver(a core.Action) error {
	if a.Tree {
		r.sentKill = r.sentKill || a.Signal == syscall.SIGKILL
		return r.signalTree(a.Signal)
	}
	if r.reaped {
		return errChildGone
	}
	r.sentKill = r.sentKill || a.Signal == syscall.SIGKILL
	return forward.Deliver(r.child, r.Target, a.Signal)
}

package supervisor

import (
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/reaper"
)

// Config is what Run needs: the machine's options plus the wiring.
type Config struct {
	Options
	Argv   []string       // the command and its arguments
	Env    []string       // the child's environment
	Target forward.Target // who gets forwarded signals
	PID1   bool           // lfinit is its PID namespace's init
	// PreserveFDs is how many inherited descriptors from 3 up the child gets.
	PreserveFDs int
	Log         *slog.Logger
}

// runner is the thin syscall side of one run: it feeds events to the
// machine and carries out its actions.
type runner struct {
	Config
	m       *Machine
	child   int
	reaped  bool // the child is reaped: its pid may be recycled, never signal it
	start   time.Time
	killed  int
	nreaped int
}

// Run starts the child and supervises it until lfinit must exit; it returns
// lfinit's exit code.
func Run(c Config) int {
	// Signal handlers first, before any child exists: a signal that arrives
	// while the child starts is queued, not lost or fatal.
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	sigs := make(chan os.Signal, 256)
	notify := []os.Signal{syscall.SIGPIPE}
	for _, s := range forward.Relayed {
		notify = append(notify, s)
	}
	signal.Notify(sigs, notify...)

	r := &runner{Config: c, m: NewMachine(c.Options), start: time.Now()}
	if !c.PID1 {
		if err := reaper.SetSubreaper(); err != nil {
			c.Log.Warn("cannot become a child subreaper; orphans of the child will not be reaped by lfinit", "err", err)
		}
	}
	if err := CloseInheritedFDs(c.PreserveFDs); err != nil {
		c.Log.Warn("cannot close inherited descriptors; the child may inherit them", "err", err)
	}
	pid, err := Spawn(c.Argv, c.Env, c.PreserveFDs)
	if err != nil {
		var se *StartError
		code := ExitNotExec
		if errors.As(err, &se) {
			code = se.Code
		}
		c.Log.Error(err.Error(), "exit_code", code)
		code, _ = r.apply(r.m.FailedToStart(code))
		return code
	}
	r.child = pid
	if err := forward.IgnoreUnrelayable(); err != nil {
		c.Log.Warn("cannot ignore SIGRTMIN and signal 32; they would kill lfinit when it is not PID 1", "err", err)
	}
	c.Log.Info("started", "pid", pid, "cmd", c.Argv[0], "pid1", c.PID1, "grace", c.Budget.Grace,
		"floor", c.Budget.Floor, "drain_delay", c.Budget.DrainDelay, "forward_to", c.Target.String())
	if code, done := r.apply(r.m.Started(time.Now(), true)); done {
		return code
	}
	// Zombies inherited from before lfinit started send no new SIGCHLD.
	if code, done := r.apply(r.reap()); done {
		return code
	}

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		var acts []Action
		select {
		case s := <-sigs:
			acts = r.signal(s.(syscall.Signal))
		case <-chld:
			acts = r.reap()
		case <-timer.C:
			acts = r.m.Tick(time.Now())
		}
		if code, done := r.apply(acts); done {
			return code
		}
		if next, ok := r.m.Next(); ok {
			timer.Reset(time.Until(next))
		} else {
			timer.Stop()
		}
	}
}

func (r *runner) signal(sig syscall.Signal) []Action {
	if sig == syscall.SIGPIPE {
		return nil // lfinit's own stderr broke; the child's output is its own
	}
	now := time.Now()
	what := "relay"
	switch {
	case r.m.IsShutdownSignal(sig) && !r.m.ShuttingDown():
		what = "shutdown"
	case r.m.IsShutdownSignal(sig):
		what = "hurry"
	case r.reaped:
		what = "dropped: the child has exited"
	}
	acts := r.m.Signal(now, sig)
	attrs := []any{"signal", forward.Name(sig), "action", what}
	if hard, ok := r.m.HardDeadline(); ok && r.m.ShuttingDown() {
		attrs = append(attrs, "reason", forward.Reason(r.m.Trigger()), "hard_deadline", hard.Format(time.RFC3339Nano), "remaining", remaining(hard, now))
	}
	r.Log.Info("signal received", attrs...)
	return acts
}

// reap collects every exited process and tells the machine about the child.
func (r *runner) reap() []Action {
	var ws unix.WaitStatus
	childDone := false
	empty := reaper.Reap(func(pid int, status unix.WaitStatus) {
		r.nreaped++
		if pid == r.child && !r.reaped {
			r.reaped, childDone, ws = true, true, status
		}
	})
	now := time.Now()
	if childDone {
		r.Log.Info("child exited", "pid", r.child, "status", describe(ws), "code", reaper.ExitCode(ws))
		return r.m.ChildExited(now, ws, empty)
	}
	if empty {
		return r.m.TreeEmpty(now)
	}
	return nil
}

// apply carries out actions in order; it reports the exit code when done.
func (r *runner) apply(acts []Action) (int, bool) {
	for _, a := range acts {
		switch a.Kind {
		case ActPhase:
			r.phase(a.Phase)
		case ActForward:
			r.forward(a)
		case ActTermTree:
			n := reaper.SignalTree(r.PID1, syscall.SIGTERM, func() {})
			r.Log.Info("terminating leftovers of the child", "signal", "SIGTERM", "processes", n)
		case ActKillTree:
			r.kill()
		case ActExit:
			r.Log.Info("exit", "outcome", string(r.m.Outcome()), "exit_code", a.Code, "duration", time.Since(r.start).Round(time.Microsecond).String(),
				"killed", r.killed, "reaped", r.nreaped)
			return a.Code, true
		}
	}
	return 0, false
}

func (r *runner) phase(p Phase) {
	attrs := []any{"phase", string(p)}
	if hard, ok := r.m.HardDeadline(); ok {
		attrs = append(attrs, "remaining", remaining(hard, time.Now()))
	}
	r.Log.Info("phase", attrs...)
}

func (r *runner) forward(a Action) {
	if r.reaped {
		return
	}
	if err := forward.Deliver(r.child, r.Target, a.Signal); err != nil {
		r.Log.Warn("cannot forward signal", "signal", forward.Name(a.Signal), "pid", r.child, "err", err)
		return
	}
	if a.Why != "relay" {
		attrs := []any{"signal", forward.Name(a.Signal), "to", r.Target.String(), "pid", r.child}
		if hard, ok := r.m.HardDeadline(); ok {
			attrs = append(attrs, "remaining", remaining(hard, time.Now()))
		}
		r.Log.Info(a.Why+" signal sent", attrs...)
	}
}

// kill sends SIGKILL to the child's group first (the cheapest, surest
// reach), then to the rest of the tree.
func (r *runner) kill() {
	n := reaper.SignalTree(r.PID1, syscall.SIGKILL, func() {
		if !r.reaped {
			forward.Deliver(r.child, forward.Group, syscall.SIGKILL)
			forward.Deliver(r.child, forward.Child, syscall.SIGKILL)
		}
	})
	first := r.killed == 0
	if first {
		r.killed = n
	}
	if first || n > 0 {
		r.Log.Warn("hard deadline: killed the process tree", "signal", "SIGKILL", "processes", n, "child_alive", !r.reaped)
	}
}

func remaining(deadline, now time.Time) string {
	return max(deadline.Sub(now), 0).Round(time.Millisecond).String()
}

func describe(ws unix.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + forward.Name(ws.Signal())
	}
	return "exited"
}

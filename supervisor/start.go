package supervisor

import (
	"errors"
	"os"

	"github.com/light-fabric/lfinit/exitcode"
	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/reaper"
	"github.com/light-fabric/lfinit/sender"
	"github.com/light-fabric/lfinit/spawn"
)

// startOrFail starts the child; true when it could not be started (the run is over).
func (r *runner) startOrFail() bool {
	err := r.startChild()
	if err == nil {
		return false
	}
	var se *spawn.Error
	code := exitcode.NotExec
	if errors.As(err, &se) {
		code = se.Code
	}
	r.Log.Error(err.Error(), "exit_code", code)
	return r.apply(r.m.FailedToStart(code))
}

// startChild prepares lfinit's side (subreaper, descriptors) and starts
// the child; once it runs, lfinit leaves the start directory and its
// inherited descriptors, and ignores the signals Go cannot catch.
func (r *runner) startChild() error {
	if !r.PID1 {
		if err := reaper.SetSubreaper(); err != nil {
			r.Log.Warn("cannot become a child subreaper; orphans of the child will not be reaped by lfinit", "err", err)
		}
	}
	// Before the start (a few system calls): a shutdown signal from the
	// child's first instant on has a known sender. The child's start
	// resets the handlers to their defaults.
	if err := sender.Record(r.m.ShutdownSignals()); err != nil {
		r.Log.Warn("cannot record who sends the shutdown signals; the status file will say unknown", "err", err)
	}
	inherited := spawn.InheritedFDs()
	opts := r.spawnOptions()
	if err := spawn.CloseInheritedFDs(opts.PreserveFDs); err != nil {
		r.Log.Warn("cannot close inherited descriptors; the child may inherit them", "err", err)
	}
	pid, err := spawn.Start(r.Argv, opts)
	// lfinit has no use for any of them: the child has its copies.
	spawn.CloseFDs(inherited)
	if err != nil {
		return err
	}
	r.child, r.interactive = pid, opts.Foreground
	r.tree.method = "kill-1"
	if !r.PID1 {
		r.tree.method = reaper.Method()
	}
	r.leaveStartDir()
	if err := forward.IgnoreUnrelayable(); err != nil {
		r.Log.Warn("cannot ignore SIGRTMIN and signal 32; they would kill lfinit when it is not PID 1", "err", err)
	}
	r.Log.Debug("started", "pid", os.Getpid(), "child_pid", pid, "cmd", r.Argv[0], "pid1", r.PID1, "terminal", r.tty != nil,
		"grace_seconds", seconds(r.Budget.Grace), "floor_seconds", seconds(r.Budget.Floor),
		"drain_delay_seconds", seconds(r.Budget.DrainDelay), "forward_to", r.Target.String(), "tree_method", r.tree.method)
	return nil
}

// spawnOptions is how the child is started: with --preserve-fds'
// descriptors and, when socket activation names lfinit (LISTEN_PID is
// its pid), the LISTEN_FDS sockets too, and LISTEN_PID made the child's.
func (r *runner) spawnOptions() spawn.Options {
	o := spawn.Options{Env: r.Env, PreserveFDs: r.PreserveFDs, Foreground: r.openTerminal(), Credential: r.Credential}
	// The watchdog's WATCHDOG_PID is the child's pid too (the same step).
	o.ListenPID = r.Watchdog > 0 && spawn.CanSetListenPID()
	n, ok := spawn.ListenFDs(r.Env, r.self)
	if !ok {
		return o
	}
	o.PreserveFDs = max(o.PreserveFDs, n)
	o.ListenPID = spawn.CanSetListenPID()
	if !o.ListenPID {
		r.Log.Warn("socket activation: the sockets are passed, but without /proc lfinit cannot make LISTEN_PID the child's pid", "listen_fds", n)
	}
	r.Log.Debug("socket activation: passing the sockets and LISTEN_PID on", "listen_fds", n)
	return o
}

// leaveStartDir moves lfinit to /, so that it pins no mount; the child
// keeps the start directory, and lfinit's own paths were made absolute
// before it started.
func (r *runner) leaveStartDir() {
	if err := os.Chdir("/"); err != nil {
		r.Log.Debug("cannot move to /", "err", err)
	}
}

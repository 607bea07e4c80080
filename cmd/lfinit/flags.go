package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"syscall"

	"github.com/light-fabric/lfinit/budget"
	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/supervisor"
)

// option is one flag of a run: its name, the value it sets (already
// holding its default, which --help shows) and its help. Its variable is
// LFINIT_ and the name (envName).
type option struct {
	name  string
	value flag.Value
	help  string
}

// def sets *p to its default d and returns p, so that a declaration names
// the flag, its variable, its default and its help in one expression.
func def[T any](p *T, d T) *T {
	*p = d
	return p
}

// options declares every option of a run, bound to c's fields, which take
// their defaults. The order is irrelevant: --help sorts by name.
func options(c *config) []option {
	o := &c.opts
	return []option{
		{"grace", durationValue{def(&o.Budget.Grace, budget.DefaultGrace)}, "time from the shutdown signal to the deadline signal"},
		{"floor", durationValue{def(&o.Budget.Floor, budget.DefaultFloor)}, "time from the grace deadline to SIGKILL of the whole tree"},
		{"drain-delay", durationValue{def(&o.Budget.DrainDelay, budget.DefaultDrainDelay)}, "time between the shutdown signal and the stop signal (readiness already false)"},
		{"on-shutdown", hookValue{def(&c.hook, nil)}, "run this command at the first shutdown signal; the stop signal waits for it (a program, or a JSON array: [\"/bin/deregister\",\"--id\",\"web-1\"])"},
		{"on-shutdown-timeout", durationValue{def(&c.hookTimeout, 0)}, "kill the --on-shutdown command after this long; 0: the drain delay (shorter than the grace)"},
		{"shutdown-signals", signalList{def(&o.ShutdownSignals, forward.DefaultShutdown)}, "signals that start a shutdown"},
		{"stop-signal", signalValue{sig: def(&o.StopSignal, 0)}, "signal the child gets when the drain starts (default: the one received)"},
		{"deadline-signal", signalValue{sig: def(&o.DeadlineSignal, 0), none: def(&o.NoDeadline, false)}, "signal sent at the grace deadline, or none (default: the stop signal)"},
		{"forward-to", choiceValue{def(&c.forwardTo, "child"), []string{"child", "group"}}, "who gets forwarded signals: child or group"},
		{"preserve-fds", countValue{def(&c.keepFDs, 0)}, "pass inherited descriptors 3 to 3+N-1 to the child; all others are closed"},
		{"exit-map", exitMap{*def(&o.ExitMap, map[int]int{})}, "remap the child's exit code FROM=TO (repeatable)"},
		{"rewrite", rewriteValue{*def(&o.Rewrite, map[syscall.Signal]syscall.Signal{})}, "the child gets signal TO when lfinit receives FROM (FROM:TO, TO 0 drops it; repeatable)"},
		{"parent-death-signal", signalValue{sig: def(&c.parentDeath, 0)}, "signal lfinit sends itself when its parent exits (not as PID 1)"},
		{"pidfile", checkedValue{stringValue{def(&o.Pidfile, "")}, checkPidfile}, "once COMMAND exits 0, follow the daemon whose pid is in this file"},
		{"pidfile-timeout", durationValue{def(&o.PidfileTimeout, supervisor.PidfileTimeoutDefault)}, "how long to wait for --pidfile to name a daemon after COMMAND exits 0"},
		{"user", checkedValue{stringValue{def(&c.user, "")}, checkUser}, "run COMMAND as USER[:GROUP] (names or numbers; lfinit keeps its own identity)"},
		{"wait-for", choiceValue{def(&c.waitFor, "child"), []string{"child", "tree"}}, "what the run lasts for: child (COMMAND) or tree (until every process of the tree is gone)"},
		{"warn-on-reap", boolValue{def(&c.warnOnReap, false)}, "log at WARN every reaped process that is not the child"},
		{"status-file", stringValue{def(&c.statusFile, "")}, "JSON status file, replaced atomically at every transition"},
		{"metrics-addr", checkedValue{stringValue{def(&c.metricsAddr, "")}, checkMetrics}, "serve /metrics, /readyz and /livez on this address (off when empty)"},
		{"ready-tcp", checkedValue{stringValue{def(&c.readyTCP, "")}, checkReadyTCP}, "stay starting until HOST:PORT accepts a connection"},
		{"ready-http", checkedValue{stringValue{def(&c.readyHTTP, "")}, checkReadyHTTP}, "stay starting until this URL answers 2xx/3xx"},
		{"termination-log", stringValue{def(&c.termLog, "")}, "final summary file, or none (default /dev/termination-log when it exists)"},
		{"stop-timeout", durationValue{def(&c.stopTimeout, 0)}, "the orchestrator's stop timeout, 0 for none: refuse to start when grace+floor+allowance exceeds it"},
		{"allowance", durationValue{def(&c.allowance, budget.DefaultAllowance)}, "margin kept below --stop-timeout"},
		{"log-format", choiceValue{def(&c.logFormat, "text"), []string{"text", "json"}}, "log format: text or json"},
		{"log-level", choiceValue{def(&c.level, "info"), []string{"debug", "info", "warn", "error"}}, "log level: debug, info, warn or error"},
		{"push-gateway", checkedValue{stringValue{def(&c.push.gateway, "")}, checkGateway}, "push the final metrics to this Pushgateway URL at exit (off when empty)"},
		{"push-job", checkedValue{stringValue{def(&c.push.job, DefaultPushJob)}, checkPushJob}, "the job name of the push"},
		{"push-grouping", *def(&c.push.grouping, labelList{map[string]string{}}), "grouping label NAME=VALUE of the push, on top of pod and namespace (repeatable)"},
		{"push-timeout", durationValue{def(&c.push.timeout, DefaultPushTimeout)}, "cap on the whole push, gathering and retries included; counts in the budget"},
		{"help", boolValue{def(&c.help, false)}, "show this help"},
		{"h", boolValue{&c.help}, "show this help"},
		{"version", boolValue{def(&c.version, false)}, "print the version"},
	}
}

// newFlagSet declares every option of a run on c.
func newFlagSet(c *config) *flag.FlagSet { return flagSet("lfinit", c) }

// flagSet declares on c the options named (all of them when none is), for
// a subcommand that reads some of the run's options.
func flagSet(name string, c *config, names ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for _, opt := range options(c) {
		if len(names) == 0 || slices.Contains(names, opt.name) {
			fs.Var(opt.value, opt.name, opt.help)
		}
	}
	return fs
}

// stringValue is a string option.
type stringValue struct{ s *string }

func (v stringValue) String() string {
	if v.s == nil {
		return ""
	}
	return *v.s
}

func (v stringValue) Set(s string) error { *v.s = s; return nil }

// boolValue is a switch: --name alone, or --name=false, or its variable set to a boolean.
type boolValue struct{ b *bool }

func (v boolValue) String() string {
	if v.b == nil {
		return ""
	}
	return strconv.FormatBool(*v.b)
}

func (v boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("%q is not a boolean (true or false)", s)
	}
	*v.b = b
	return nil
}

// IsBoolFlag lets --name stand without a value.
func (v boolValue) IsBoolFlag() bool { return true }

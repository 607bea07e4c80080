package main

import (
	"flag"
	"io"
	"strings"
	"syscall"

	"github.com/light-fabric/lfinit/budget"
	"github.com/light-fabric/lfinit/cmd/lfinit/internal/push"
	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/forward"
)

// option is one flag of a run or a subcommand: its name, the value it
// sets (already holding its default, which --help shows), its help, what
// stands for its value in a synopsis ("" for a switch) and the commands
// that read it. Its variable is LFINIT_ and the name (envName).
type option struct {
	name  string
	value flag.Value
	help  string
	arg   string
	in    scope
}

// scope is the set of commands that read an option: a run, and each
// subcommand.
type scope uint8

const (
	inRun scope = 1 << iota
	inStatus
	inProbe
	inBudget
	inVersion
)

// withDefault sets *p to its default d and returns p, so that a declaration names
// the flag, its variable, its default and its help in one expression.
func withDefault[T any](p *T, d T) *T {
	*p = d
	return p
}

// options declares every option of a run and of the subcommands, bound to
// c's fields, which take their defaults. --help sorts a run's by name; a
// subcommand's synopsis lists its own in this order.
func options(c *config) []option {
	o := &c.opts
	return []option{
		{"grace", durationValue{withDefault(&o.Budget.Grace, budget.DefaultGrace)}, "time from the shutdown signal to the deadline signal", "D", inRun | inBudget},
		{"floor", durationValue{withDefault(&o.Budget.Floor, budget.DefaultFloor)}, "time from the grace deadline to SIGKILL of the whole tree", "D", inRun | inBudget},
		{"drain-delay", durationValue{withDefault(&o.Budget.DrainDelay, budget.DefaultDrainDelay)}, "time between the shutdown signal and the stop signal (readiness already false)", "D", inRun | inBudget},
		{"on-shutdown", hookValue{withDefault(&c.hook, nil)}, "run this command at the first shutdown signal; the stop signal waits for it (a program, or a JSON array: [\"/bin/deregister\",\"--id\",\"web-1\"])", "CMD", inRun | inBudget},
		{"on-shutdown-timeout", durationValue{withDefault(&c.hookTimeout, 0)}, "kill the --on-shutdown command after this long; 0: the drain delay (shorter than the grace)", "D", inRun | inBudget},
		{"shutdown-signals", signalList{withDefault(&o.ShutdownSignals, forward.DefaultShutdown)}, "signals that start a shutdown", "SIGS", inRun},
		{"stop-signal", signalValue{sig: withDefault(&o.StopSignal, 0)}, "signal the child gets when the drain starts (default: the one received)", "SIG", inRun},
		{"deadline-signal", signalValue{sig: withDefault(&o.DeadlineSignal, 0), none: withDefault(&o.NoDeadline, false)}, "signal sent at the grace deadline, or none (default: the stop signal)", "SIG", inRun},
		{"forward-to", choiceValue{withDefault(&c.forwardTo, "child"), []string{"child", "group"}}, "who gets forwarded signals: child or group", "WHO", inRun},
		{"preserve-fds", countValue{withDefault(&c.keepFDs, 0)}, "pass inherited descriptors 3 to 3+N-1 to the child; all others are closed", "N", inRun},
		{"exit-map", exitMap{*withDefault(&o.ExitMap, map[int]int{})}, "remap the child's exit code FROM=TO (repeatable)", "FROM=TO", inRun},
		{"rewrite", rewriteValue{*withDefault(&o.Rewrite, map[syscall.Signal]syscall.Signal{})}, "the child gets signal TO when lfinit receives FROM (FROM:TO, TO 0 drops it; repeatable)", "FROM:TO", inRun},
		{"parent-death-signal", signalValue{sig: withDefault(&c.parentDeath, 0)}, "signal lfinit sends itself when its parent exits (not as PID 1)", "SIG", inRun},
		{"pidfile", checkedValue{stringValue{withDefault(&o.Pidfile, "")}, checkPidfile}, "once COMMAND exits 0, follow the daemon whose pid is in this file", "PATH", inRun},
		{"pidfile-timeout", durationValue{withDefault(&o.PidfileTimeout, core.PidfileTimeoutDefault)}, "how long to wait for --pidfile to name a daemon after COMMAND exits 0", "D", inRun},
		{"user", checkedValue{stringValue{withDefault(&c.user, "")}, checkUser}, "run COMMAND as USER[:GROUP] (names or numbers; lfinit keeps its own identity)", "USER[:GROUP]", inRun},
		{"wait-for", choiceValue{withDefault(&c.waitFor, "child"), []string{"child", "tree"}}, "what the run lasts for: child (COMMAND) or tree (until every process of the tree is gone)", "WHAT", inRun},
		{"warn-on-reap", boolValue{withDefault(&c.warnOnReap, false)}, "log at WARN every reaped process that is not the child", "", inRun},
		{statusFileOption, stringValue{withDefault(&c.statusFile, "")}, "JSON status file, replaced atomically at every transition", "PATH", inRun | inStatus | inProbe},
		{"metrics-addr", checkedValue{stringValue{withDefault(&c.metricsAddr, "")}, checkMetrics}, "serve /metrics, /readyz and /livez on this address (off when empty)", "ADDR", inRun},
		{"ready-tcp", checkedValue{stringValue{withDefault(&c.readyTCP, "")}, checkReadyTCP}, "stay starting until HOST:PORT accepts a connection", "HOST:PORT", inRun},
		{"ready-notify", checkedValue{stringValue{withDefault(&c.readyNotify, "")}, checkReadyNotify}, "serve the systemd notify protocol (NOTIFY_SOCKET) to the tree and stay starting until READY=1: abstract, or a directory for the socket (off when empty)", "WHERE", inRun},
		{"watchdog", durationValue{withDefault(&c.watchdog, 0)}, "with --ready-notify: the service must send WATCHDOG=1 within this interval (it gets WATCHDOG_USEC), else lfinit is not live; 0 for none", "D", inRun},
		{"watchdog-action", choiceValue{withDefault(&c.watchdogAction, "none"), []string{"none", "stop"}}, "what a missed watchdog does besides failing liveness: none, or stop (lfinit's own bounded shutdown, reason watchdog)", "ACTION", inRun},
		{"ready-http", checkedValue{stringValue{withDefault(&c.readyHTTP, "")}, checkReadyHTTP}, "stay starting until this URL answers 2xx/3xx", "URL", inRun},
		{"termination-log", stringValue{withDefault(&c.termLog, "")}, "final summary file, or none (default /dev/termination-log when it exists)", "PATH", inRun},
		{"stop-timeout", durationValue{withDefault(&c.stopTimeout, 0)}, "the orchestrator's stop timeout, 0 for none: refuse to start when grace+floor+allowance exceeds it", "D", inRun | inBudget},
		{"allowance", durationValue{withDefault(&c.allowance, budget.DefaultAllowance)}, "margin kept below --stop-timeout", "D", inRun | inBudget},
		{"log-format", choiceValue{withDefault(&c.logFormat, "text"), []string{"text", "json"}}, "log format: text or json", "FORMAT", inRun},
		{"log-level", choiceValue{withDefault(&c.level, "info"), logLevels}, "log level: " + oneOf(logLevels), "LEVEL", inRun},
		{"push-gateway", checkedValue{stringValue{withDefault(&c.push.Gateway, "")}, checkGateway}, "push the final metrics to this Pushgateway URL at exit (off when empty)", "URL", inRun | inBudget},
		{"push-job", checkedValue{stringValue{withDefault(&c.push.Job, push.DefaultJob)}, checkPushJob}, "the job name of the push", "JOB", inRun},
		{"push-grouping", *withDefault(&c.push.Grouping, push.Labels{}), "grouping label NAME=VALUE of the push, on top of pod and namespace (repeatable)", "NAME=VALUE", inRun},
		{"push-timeout", durationValue{withDefault(&c.push.Timeout, push.DefaultTimeout)}, "cap on the whole push, gathering and retries included; counts in the budget", "D", inRun | inBudget},
		{"help", boolValue{withDefault(&c.help, false)}, "show this help", "", inRun},
		{"h", boolValue{&c.help}, "show this help", "", inRun},
		{"version", boolValue{withDefault(&c.version, false)}, "print the version", "", inRun},
		{"json", boolValue{withDefault(&c.asJSON, false)}, "print JSON", "", inStatus | inVersion},
	}
}

// statusFileOption is the option that names the status file, which the
// status and probe subcommands read as a run writes it.
const statusFileOption = "status-file"

// logLevels are the names of --log-level, the most verbose first; each is
// the name slog gives its level.
var logLevels = []string{"debug", "info", "warn", "error"}

// oneOf writes choices as a list to pick from: "a, b or c".
func oneOf(choices []string) string {
	if len(choices) < 2 {
		return strings.Join(choices, "")
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}

// newFlagSet declares every option of a run on c.
func newFlagSet(c *config) *flag.FlagSet { return flagSet("lfinit", c, inRun) }

// flagSet declares on c the options of the command in.
func flagSet(name string, c *config, in scope) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for _, opt := range options(c) {
		if opt.in&in != 0 {
			fs.Var(opt.value, opt.name, opt.help)
		}
	}
	return fs
}

// synopsis is the usage line of the command in: lfinit, its name and
// words, then each of its options.
func synopsis(name, words string, in scope) string {
	line := "lfinit " + name
	if words != "" {
		line += " " + words
	}
	for _, opt := range options(&config{}) {
		if opt.in&in == 0 {
			continue
		}
		if opt.arg == "" {
			line += " [--" + opt.name + "]"
		} else {
			line += " [--" + opt.name + " " + opt.arg + "]"
		}
	}
	return line
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/light-fabric/lfinit/exitcode"
	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/readiness"
	"github.com/light-fabric/lfinit/supervisor"
)

// config is everything a run was asked to do.
type config struct {
	opts   supervisor.Options
	target forward.Target
	// forwardTo is --forward-to, read into target.
	forwardTo string
	keepFDs   int
	// Observability and readiness.
	statusFile  string
	metricsAddr string
	readyTCP    string
	readyHTTP   string
	termLog     string
	stopTimeout time.Duration
	allowance   time.Duration
	logFormat   string
	level       string // --log-level, read into logLevel
	logLevel    slog.Level
	push        pushConfig
	hook        []string      // --on-shutdown (hookopts.go)
	hookTimeout time.Duration // --on-shutdown-timeout, 0: the drain delay
	argv        []string
	help        bool
	version     bool
	// Signals around the run, and the peers' options (compat.go).
	parentDeath syscall.Signal // --parent-death-signal, 0: none
	warnOnReap  bool
	license     bool   // tini -l, catatonit -L
	waitFor     string // --wait-for: child or tree (daemonopts.go)
	user        string // --user USER[:GROUP], resolved by prepare (user.go)
}

// usageError is a bad flag, variable or value: exit 2 before anything starts.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// envName is the LFINIT_* variable that sets the flag name.
func envName(flagName string) string {
	return "LFINIT_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseDuration accepts Go durations with a unit, and a bare 0.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, fmt.Errorf("%q needs a unit, e.g. %sms or %ss", s, s, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (use a number with a unit: 250ms, 8s, 1m)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return d, nil
}

type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	switch {
	case v.d == nil:
		return ""
	case *v.d == 0:
		return "0" // as it is written: a bare 0 needs no unit
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err == nil {
		*v.d = d
	}
	return err
}

// signalValue is one signal; none (when allowed) sets *none.
type signalValue struct {
	sig       *syscall.Signal
	none      *bool
	catchable bool // must be a signal lfinit can catch (a shutdown trigger)
}

func (v signalValue) String() string {
	if v.sig == nil || *v.sig == 0 {
		return ""
	}
	return forward.Name(*v.sig)
}

func (v signalValue) Set(s string) error {
	if v.none != nil && strings.EqualFold(strings.TrimSpace(s), "none") {
		*v.none, *v.sig = true, 0
		return nil
	}
	sig, err := forward.Parse(s)
	if err != nil {
		return err
	}
	if v.catchable && !forward.IsRelayed(sig) {
		return fmt.Errorf("%s cannot be caught and relayed by lfinit", forward.Name(sig))
	}
	*v.sig = sig
	if v.none != nil {
		*v.none = false
	}
	return nil
}

type signalList struct{ sigs *[]syscall.Signal }

func (v signalList) String() string {
	if v.sigs == nil {
		return ""
	}
	var names []string
	for _, s := range *v.sigs {
		names = append(names, strings.TrimPrefix(forward.Name(s), "SIG"))
	}
	return strings.Join(names, ",")
}

func (v signalList) Set(s string) error {
	var out []syscall.Signal
	for _, word := range strings.Split(s, ",") {
		var sig syscall.Signal
		if err := (signalValue{sig: &sig, catchable: true}).Set(word); err != nil {
			return err
		}
		out = append(out, sig)
	}
	*v.sigs = out
	return nil
}

// exitMap collects FROM=TO pairs; a comma separates several in one value.
type exitMap struct{ m map[int]int }

func (v exitMap) String() string { return "" }

func (v exitMap) Set(s string) error {
	for _, pair := range strings.Split(s, ",") {
		from, to, ok := strings.Cut(strings.TrimSpace(pair), "=")
		f, err1 := strconv.Atoi(from)
		t, err2 := strconv.Atoi(to)
		if !ok || err1 != nil || err2 != nil || f < 0 || f > 255 || t < 0 || t > 255 {
			return fmt.Errorf("%q is not FROM=TO with two exit codes 0-255 (e.g. 143=0)", pair)
		}
		v.m[f] = t
	}
	return nil
}

// countValue is a non-negative integer.
type countValue struct{ n *int }

func (v countValue) String() string {
	if v.n == nil {
		return ""
	}
	return strconv.Itoa(*v.n)
}

func (v countValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > 1<<16 {
		return fmt.Errorf("%q is not a count of descriptors (0 or more)", s)
	}
	*v.n = n
	return nil
}

type choiceValue struct {
	s       *string
	choices []string
}

func (v choiceValue) String() string { return stringValue{v.s}.String() }

func (v choiceValue) Set(s string) error {
	for _, c := range v.choices {
		if s == c {
			*v.s = s
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %s", s, strings.Join(v.choices, ", "))
}

// parseArgs turns the command line and environment into a config. getenv
// is os.Getenv in real life. A flag wins over its variable.
func parseArgs(args []string, getenv func(string) string) (*config, error) {
	c := &config{}
	fs := newFlagSet(c)
	args, err := expandPeers(fs, args, c)
	if err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.help = true
			return c, nil
		}
		// The flag package says "-name"; lfinit documents "--name".
		return nil, usagef("%s", flagError(fs, err))
	}
	if err := applyEnv(fs, getenv); err != nil {
		return nil, err
	}
	if err := applyPeerEnv(fs, getenv, &c.forwardTo, &c.level); err != nil {
		return nil, err
	}
	if c.help || c.version || c.license {
		return c, nil
	}
	c.argv = fs.Args()
	if len(c.argv) == 0 {
		return nil, usagef("no command given: usage is lfinit [options] [--] COMMAND [ARG...]")
	}
	if err := c.push.check(); err != nil {
		return nil, err
	}
	if c.push.gateway != "" {
		c.opts.Budget.Push = c.push.timeout
	}
	if err := c.checkHook(); err != nil {
		return nil, err
	}
	if err := c.opts.Budget.Validate(); err != nil {
		return nil, usagef("%v: set --drain-delay below --grace", err)
	}
	if err := c.checkObservability(); err != nil {
		return nil, err
	}
	if err := c.checkDaemon(); err != nil {
		return nil, err
	}
	c.target, _ = forward.ParseTarget(c.forwardTo)
	c.logLevel = map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}[c.level]
	return c, nil
}

const helpText = `lfinit — an init for containers with a bounded, observable shutdown

Usage:
  lfinit [options] [--] COMMAND [ARG...]
  lfinit status [--status-file PATH] [--json]
  lfinit probe ready|live [--status-file PATH]
  lfinit budget [--grace D] [--floor D] [--drain-delay D] [--stop-timeout D] [--allowance D]
                [--push-gateway URL --push-timeout D] [--on-shutdown CMD --on-shutdown-timeout D]
  lfinit version [--json]

lfinit starts COMMAND as its child in its own process group, forwards every
signal a user may send, reaps every zombie, and bounds the shutdown: the first
shutdown signal at t0 sends the stop signal at t0+drain-delay, the deadline
signal at t0+grace, and SIGKILL to the whole tree at t0+grace+floor, after
which lfinit exits 1. Option parsing stops at the first word that is not an
option; "--" ends the options explicitly.

Options (each also read from the LFINIT_* variable shown; the flag wins):
`

const helpTail = `
Durations need a unit (250ms, 8s, 1m); a bare 0 is allowed. Signals may be
written TERM, SIGTERM or 15.

Exit codes: the child's code (or %d+N if it died by signal N, after
--exit-map) when it exited on its own or before the grace deadline; %d when
the grace deadline passed or lfinit had to SIGKILL it, or --pidfile named no
daemon to follow; %d for a usage error; %d when COMMAND cannot be executed;
%d when it is not found.

tini's, dumb-init's and catatonit's options and variables (-s, -g, -e CODE,
-p SIG, -v, -w, -c, -r FROM:TO, TINI_KILL_PROCESS_GROUP, DUMB_INIT_SETSID, …)
are accepted with the same meaning, or refused with the lfinit option to use:
see "Switching from tini, dumb-init or catatonit" in lfinit(1).
`

// applyEnv sets every flag that was not given on the command line from its
// LFINIT_* variable, so that the flag wins.
func applyEnv(fs *flag.FlagSet, getenv func(string) string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		val := getenv(envName(f.Name))
		if set[f.Name] || val == "" || err != nil || envIgnored(f.Name) {
			return
		}
		if e := f.Value.Set(val); e != nil {
			err = usagef("invalid value %q for %s: %v", val, envName(f.Name), e)
		}
	})
	return err
}

// errHelp is a subcommand's --help: print its usage, exit 0.
var errHelp = errors.New("help requested")

// parseFlags parses a subcommand's flags and variables.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usagef("%s", flagError(fs, err))
	}
	return applyEnv(fs, getenv)
}

// checkObservability validates the readiness checks and the stop timeout.
func (c *config) checkObservability() error {
	switch {
	case c.readyTCP != "" && c.readyHTTP != "":
		// Each value was checked as it was set (checks.go).
		return usagef("--ready-tcp and --ready-http exclude each other: choose one")
	}
	b := c.opts.Budget
	if c.stopTimeout > 0 && !b.Fits(c.stopTimeout, c.allowance) {
		return usagef("%s = %v does not fit --stop-timeout %v: the orchestrator would SIGKILL first (137); raise its timeout to %ds or lower --grace",
			b.Breakdown(c.allowance), b.Needed(c.allowance), c.stopTimeout, b.RecommendedSeconds(c.allowance))
	}
	return nil
}

// readiness is the configured readiness check, or nil.
func (c *config) readiness() *readiness.Check {
	if c.readyTCP == "" && c.readyHTTP == "" {
		return nil
	}
	return &readiness.Check{TCP: c.readyTCP, HTTP: c.readyHTTP}
}

// writeHelp prints the options with their variables and defaults.
func writeHelp(w io.Writer) {
	fs := newFlagSet(&config{})
	fmt.Fprint(w, helpText)
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "h" || f.Name == "help" || f.Name == "version" {
			return
		}
		def := ""
		if d := f.DefValue; d != "" && d != "false" {
			def = " (default " + d + ")"
		}
		fmt.Fprintf(w, "  --%-18s %s%s\n  %-20s [%s]\n", f.Name, f.Usage, def, "", envName(f.Name))
	})
	fmt.Fprintf(w, "  --%-18s %s\n  --%-18s %s\n", "help", "show this help", "version", "print the version")
	fmt.Fprintf(w, helpTail, exitcode.SignalBase, exitcode.Forced, exitcode.Usage, exitcode.NotExec, exitcode.NotFound)
}

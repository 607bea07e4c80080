package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"syscall"
	"time"

	"github.com/light-fabric/lfinit/cmd/lfinit/internal/push"
	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/readiness"
)

// config is everything a run was asked to do.
type config struct {
	opts   core.Options
	target forward.Target
	// forwardTo is --forward-to, read into target.
	forwardTo string
	keepFDs   int
	// Observability and readiness.
	statusFile  string
	metricsAddr string
	readyTCP    string
	readyHTTP   string
	readyNotify string // --ready-notify: "", abstract or a directory
	watchdog    time.Duration
	// --watchdog-action: none or stop
	watchdogAction string
	termLog        string
	stopTimeout    time.Duration
	allowance      time.Duration
	logFormat      string
	level          string // --log-level, read into logLevel
	logLevel       slog.Level
	push           push.Config
	argv           []string
	help           bool
	asJSON         bool // a subcommand's --json
	version        bool
	// Signals around the run, and the peers' options (compat.go).
	parentDeath syscall.Signal // --parent-death-signal, 0: none
	warnOnReap  bool
	license     bool          // tini -l, catatonit -L
	waitFor     string        // --wait-for: child or tree (daemonopts.go)
	user        string        // --user USER[:GROUP], resolved by prepare (user.go)
	hook        []string      // --on-shutdown (hookopts.go)
	hookTimeout time.Duration // --on-shutdown-timeout, 0: the drain delay
}

// usageError is a bad flag, variable or value: exit 2 before anything starts.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// envName is the LFINIT_* variable that sets the flag name.
func envName(flagName string) string {
	return "LFINIT_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
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
	if err := checkPush(c.push); err != nil {
		return nil, err
	}
	if err := c.checkBudget(); err != nil {
		return nil, err
	}
	if err := c.checkObservability(); err != nil {
		return nil, err
	}
	if err := c.checkDaemon(); err != nil {
		return nil, err
	}
	c.target, _ = forward.ParseTarget(c.forwardTo)
	// One of logLevels, checked as it was set: slog reads its own names.
	_ = c.logLevel.UnmarshalText([]byte(c.level))
	return c, nil
}

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

// checkObservability validates the readiness checks.
func (c *config) checkObservability() error {
	if c.watchdog > 0 && c.readyNotify == "" {
		return usagef("--watchdog needs --ready-notify: the service sends WATCHDOG=1 over its socket")
	}
	if c.readyTCP != "" && c.readyHTTP != "" {
		// Each value was checked as it was set (checks.go).
		return usagef("--ready-tcp and --ready-http exclude each other: choose one")
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

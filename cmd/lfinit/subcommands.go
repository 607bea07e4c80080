package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/light-fabric/lfinit/budget"
	"github.com/light-fabric/lfinit/cmd/lfinit/internal/report"
	"github.com/light-fabric/lfinit/exitcode"
	"github.com/light-fabric/lfinit/statusfile"
)

// subcommand is a word that is not a program to run. Its options are
// the table's (options.go) that name it in their scope.
type subcommand struct {
	name  string
	in    scope
	words string // what it takes before its options, e.g. ready|live
	note  string // after the synopsis in its --help
	run   func(c *config, args []string, stdout io.Writer) (int, error)
}

// subcommands are the words that are not a program to run, in the order
// --help lists them; `lfinit -- status` runs a program called status.
var subcommands = []subcommand{
	{"status", inStatus, "", envName(statusFileOption), statusCmd},
	{"probe", inProbe, "ready|live", "exit 0 when ready/live, 1 when not", probeCmd},
	{"budget", inBudget, "", "", budgetCmd},
	{"version", inVersion, "", "version, commit, Go version, platform", versionCmd},
}

// lookupSubcommand is the subcommand called name.
func lookupSubcommand(name string) (subcommand, bool) {
	for _, sc := range subcommands {
		if sc.name == name {
			return sc, true
		}
	}
	return subcommand{}, false
}

// synopsis is the subcommand's usage line, derived from the option table.
func (sc subcommand) synopsis() string { return synopsis(sc.name, sc.words, sc.in) }

// runSubcommand parses a subcommand's options and variables, runs it, and
// maps a usage error to exitcode.Usage.
func runSubcommand(name string, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	sc, _ := lookupSubcommand(name)
	code, err := sc.parseAndRun(args, getenv, stdout)
	var ue *usageError
	switch {
	case errors.Is(err, errHelp):
		usage := sc.synopsis()
		if sc.note != "" {
			usage += "   (" + sc.note + ")"
		}
		fmt.Fprintf(stdout, "usage: %s\n", usage)
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "lfinit %s: %s (see lfinit --help)\n", name, shortenMessage(ue.msg))
		return exitcode.Usage
	case err != nil:
		fmt.Fprintf(stderr, "lfinit %s: %v\n", name, err)
	}
	return code
}

// parseAndRun reads the subcommand's options into a config and runs it
// with the words left. A subcommand that takes words (probe) takes its
// first one before its options.
func (sc subcommand) parseAndRun(args []string, getenv func(string) string, stdout io.Writer) (int, error) {
	var lead []string
	if sc.words != "" && len(args) > 0 {
		lead, args = args[:1], args[1:]
	}
	c := &config{}
	fs := flagSet(sc.name, c, sc.in)
	if err := parseFlags(fs, args, getenv); err != nil {
		return exitcode.Usage, err
	}
	return sc.run(c, append(lead, fs.Args()...), stdout)
}

func readStatus(path string) (statusfile.Status, error) {
	if path == "" {
		return statusfile.Status{}, usagef("no status file: pass --%s or set %s, as for the run", statusFileOption, envName(statusFileOption))
	}
	return statusfile.Read(path)
}

// statusCmd prints the state of a running lfinit from its status file.
func statusCmd(c *config, _ []string, stdout io.Writer) (int, error) {
	path := c.statusFile
	s, err := readStatus(path)
	if err != nil {
		return exitcode.Failed, err
	}
	stale := staleness(s)
	if stale != "" {
		// A dead lfinit's last "ready" is not the truth, in either output.
		s.Ready = false
	}
	if c.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(statusView{s, stale != "", stale}); err != nil {
			return exitcode.Failed, err
		}
	} else {
		if stale != "" {
			fmt.Fprintf(stdout, "STALE:      %s\n", stale)
		}
		fmt.Fprint(stdout, report.Describe(s, time.Now()))
	}
	if stale != "" {
		// Exit 1, so that a script does not take a dead lfinit's last
		// "ready" for the truth.
		return exitcode.Failed, fmt.Errorf("%s: %s", path, stale)
	}
	return 0, nil
}

// statusView is what `lfinit status --json` prints: the status file's
// keys, then whether the file is stale (its writer gone without writing
// stopped) and why.
type statusView struct {
	statusfile.Status
	Stale       bool   `json:"stale"`
	StaleReason string `json:"stale_reason,omitempty"`
}

// staleness says why s is not the state of a running lfinit: the one that
// wrote it is gone without writing "stopped". "" when it runs, stopped
// cleanly, or cannot be told from here.
func staleness(s statusfile.Status) string {
	if s.Phase == statusfile.Stopped || report.WriterState(s, "/proc") != report.WriterGone {
		return ""
	}
	return fmt.Sprintf("the lfinit that wrote this file (pid %d) is gone (killed or crashed); its last phase was %s", s.Pid, s.Phase)
}

// probeCmd answers an exec probe: exit 0 when ready (or live), 1 when not.
func probeCmd(c *config, args []string, stdout io.Writer) (int, error) {
	if len(args) == 0 || (args[0] != "ready" && args[0] != "live") {
		return exitcode.Usage, usagef("say which probe: lfinit probe ready|live")
	}
	kind := args[0]
	s, err := readStatus(c.statusFile)
	if err != nil {
		return exitcode.Failed, err
	}
	if stale := staleness(s); stale != "" {
		fmt.Fprintf(stdout, "not %s: %s\n", kind, stale)
		return exitcode.Failed, nil
	}
	ok := report.ProbeLive(s, writerAlive)
	if kind == "ready" {
		ok = report.ProbeReady(s, writerAlive)
	}
	if !ok {
		fmt.Fprintf(stdout, "not %s: phase %s\n", kind, s.Phase)
		return exitcode.Failed, nil
	}
	fmt.Fprintf(stdout, "%s: phase %s\n", kind, s.Phase)
	return 0, nil
}

// writerAlive is what the probes need once staleness found nothing: the
// writer runs, or cannot be told from here (another PID namespace), in
// which case the file is taken at its word.
func writerAlive(int) bool { return true }

// budgetCmd prints the shutdown timeline and checks it against a stop timeout.
// It reads the run's own options and checks them as a run does
// (checkBudget), so that the defaults, the spelling and the messages are
// the run's.
func budgetCmd(c *config, _ []string, stdout io.Writer) (int, error) {
	err := c.checkBudget()
	var short *tooShort
	if err != nil && !errors.As(err, &short) {
		return exitcode.Usage, err
	}
	b, allowance := c.opts.Budget, c.allowance
	fmt.Fprint(stdout, timeline(b))
	rec := b.RecommendedSeconds(allowance)
	fmt.Fprintf(stdout, "needs a stop timeout of at least %v (%s)\n", b.Needed(allowance), b.Breakdown(allowance))
	fmt.Fprintf(stdout, "recommended: terminationGracePeriodSeconds: %d   (docker stop -t %d, podman stop -t %d)\n", rec, rec, rec)
	switch {
	case short != nil:
		fmt.Fprintf(stdout, "%s\n", short.msg)
		return exitcode.Failed, nil
	case c.stopTimeout > 0:
		fmt.Fprintf(stdout, "stop timeout %v: fits, %v to spare\n", c.stopTimeout, c.stopTimeout-b.Needed(allowance))
	}
	return 0, nil
}

// timeline is the schedule of a shutdown, one line per step, as
// budget.Start fixes it for a ready child whose first shutdown signal
// comes at t0.
func timeline(b budget.Config) string {
	var t0 time.Time
	tl := budget.Start(b, t0, true)
	at := func(t time.Time) string { return "t0+" + t.Sub(t0).String() }
	out := "shutdown timeline (t0 = the first shutdown signal):\n"
	out += fmt.Sprintf("  %-14s readiness drops (/readyz 503); the child is untouched while it quiesces\n", "t0")
	if !tl.HookDeadline.IsZero() {
		// A hook that ends at once lets the stop signal go at the drain delay.
		first := tl.HookEnded(b, t0).StopAt
		out += fmt.Sprintf("  %-14s shutdown hook starts (--on-shutdown)\n", "t0")
		out += fmt.Sprintf("  %-14s at the latest: shutdown hook killed (--on-shutdown-timeout %v)\n", at(tl.HookDeadline), tl.HookDeadline.Sub(t0))
		out += fmt.Sprintf("  %-14s at the latest: stop signal forwarded (when the hook ends, not before %s); the drain begins\n", at(tl.StopAt), at(first))
	} else {
		out += fmt.Sprintf("  %-14s stop signal forwarded; the drain begins\n", at(tl.StopAt))
	}
	out += fmt.Sprintf("  %-14s grace deadline: deadline signal; the child is late (exit 1 from here)\n", at(tl.GraceDeadline))
	out += fmt.Sprintf("  %-14s hard deadline: SIGKILL to the whole tree, lfinit exits 1\n", at(tl.HardDeadline))
	if b.Push > 0 {
		// The push comes once the tree is reaped, after the hard deadline.
		out += fmt.Sprintf("  %-14s at the latest: the final metrics pushed (--push-timeout %v), lfinit gone\n", at(tl.HardDeadline.Add(b.Push)), b.Push)
	}
	return out
}

package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/light-fabric/lfinit/exitcode"
)

const helpHead = `lfinit — an init for containers with a bounded, observable shutdown

Usage:
  lfinit [options] [--] COMMAND [ARG...]
`

const helpText = `
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

// writeHelp prints the options with their variables and defaults.
func writeHelp(w io.Writer) {
	fs := newFlagSet(&config{})
	fmt.Fprint(w, helpHead)
	for _, sc := range subcommands {
		fmt.Fprint(w, wrapSynopsis("  "+sc.synopsis(), helpWidth))
	}
	fmt.Fprint(w, helpText)
	// The name column is as wide as the longest name, so that no name
	// runs into its text.
	width := 0
	fs.VisitAll(func(f *flag.Flag) { width = max(width, len(f.Name)) })
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "h" || f.Name == "help" || f.Name == "version" {
			return
		}
		def := ""
		if d := f.DefValue; d != "" && d != "false" {
			def = " (default " + d + ")"
		}
		fmt.Fprintf(w, "  --%-*s %s%s\n  %-*s [%s]\n", width, f.Name, f.Usage, def, width+2, "", envName(f.Name))
	})
	fmt.Fprintf(w, "  --%-*s %s\n  --%-*s %s\n", width, "help", "show this help", width, "version", "print the version")
	fmt.Fprintf(w, helpTail, exitcode.SignalBase, exitcode.Forced, exitcode.Usage, exitcode.NotExec, exitcode.NotFound)
}

// helpWidth is where a synopsis in --help wraps.
const helpWidth = 92

// wrapSynopsis breaks line before an option that would pass width; the
// next lines start under the first option.
func wrapSynopsis(line string, width int) string {
	indent := strings.Repeat(" ", strings.Index(line, " [")+1)
	out, cur := "", ""
	for i, part := range strings.SplitAfter(line, "] ") {
		if i > 0 && len(strings.TrimRight(cur+part, " ")) > width {
			out += strings.TrimRight(cur, " ") + "\n"
			cur = indent
		}
		cur += part
	}
	return out + strings.TrimRight(cur, " ") + "\n"
}

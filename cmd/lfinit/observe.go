package main

import (
	"log/slog"
	"slices"
	"strings"

	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/forward"
)

// knownSignals names the signals whose counters start at 0: the common
// ones (forward.Common), the shutdown signals and the stop and deadline
// signals.
func knownSignals(o core.Options) []string {
	sigs := append(slices.Clone(forward.Common), o.ShutdownSignals...)
	sigs = append(sigs, o.StopSignal, o.DeadlineSignal)
	var names []string
	for _, s := range sigs {
		if n := forward.Name(s); s != 0 && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// warnUnknownVariables logs, once, the LFINIT_ variables no option reads.
// Only a run warns: the subcommands read the same variables, but an exec
// probe every few seconds would repeat the line forever.
func warnUnknownVariables(env []string, log *slog.Logger) {
	// Most runs set none: then no flag set is built just to check them
	// (kilobytes of fresh heap pages on every start).
	if !slices.ContainsFunc(env, isOptionVariable) {
		return
	}
	if names := unknownVariables(newFlagSet(&config{}), env); len(names) > 0 {
		log.Warn("ignoring LFINIT_ variables that no option reads", "variables", strings.Join(names, ", "))
	}
}

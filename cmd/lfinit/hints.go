package main

import (
	"flag"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/light-fabric/lfinit/forward"
)

// maxEcho is how much of a bad value a usage error repeats: enough to
// recognise it, not a 256 KiB line in the log.
const maxEcho = 64

// maxMessage caps a whole usage message, whatever it quotes.
const maxMessage = 512

// shorten cuts s to maxEcho characters, marking the cut with "…".
func shorten(s string) string {
	if utf8.RuneCountInString(s) <= maxEcho {
		return s
	}
	return string([]rune(s)[:maxEcho]) + "…"
}

// The patterns of usage messages are compiled when a message needs them,
// not at every start: each compile costs the start heap pages and time
// before the child's exec.
var (
	// quoted matches a Go-quoted string (%q) inside a message.
	quoted = lazyRegexp(`"(?:[^"\\]|\\.)*"`)
	// longWord is a run of characters without spaces too long to be
	// anything but a pasted value (e.g. an unknown flag name of 256 KiB).
	longWord = lazyRegexp(`[^\s"]{96,}`)
	// boolFor is the flag package's message for a bad switch value.
	boolFor = lazyRegexp(`^invalid boolean value ("(?:[^"\\]|\\.)*") for -([\w-]+):`)
)

// lazyRegexp compiles expr on its first use.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// shortenMessage shortens every value a usage message echoes, whichever
// code wrote it (lfinit's own checks or the flag package), so each error
// stays one readable line.
func shortenMessage(msg string) string {
	msg = quoted().ReplaceAllStringFunc(msg, func(q string) string {
		inner := q[1 : len(q)-1]
		if utf8.RuneCountInString(inner) <= maxEcho {
			return q
		}
		cut := strings.TrimRight(string([]rune(inner)[:maxEcho]), `\`)
		return `"` + cut + `…"`
	})
	msg = longWord().ReplaceAllStringFunc(msg, shorten)
	if len(msg) > maxMessage {
		msg = truncateRunes(msg, maxMessage) + "…"
	}
	return msg
}

func truncateRunes(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// flagError rewrites a flag package error in lfinit's terms: "--name"
// rather than "-name", and for an unknown option the closest known one.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	const unknown = "flag provided but not defined: -"
	if name, ok := strings.CutPrefix(msg, unknown); ok {
		out := "flag provided but not defined: " + dashed(shorten(name))
		if best := closest(name, flagNames(fs)); best != "" {
			out += "; did you mean " + dashed(best) + "?"
		}
		return out
	}
	msg = strings.Replace(msg, "flag -", "--", 1)
	// A switch's error reads "invalid boolean value %q for -name: …".
	if m := boolFor().FindStringSubmatch(msg); m != nil {
		msg = "invalid value " + m[1] + " for " + dashed(m[2]) + ":" + msg[len(m[0]):]
	}
	return strings.Replace(msg, "not defined: -", "not defined: --", 1)
}

// dashed writes a flag as the help does: -s for one letter, --name otherwise.
func dashed(name string) string {
	if utf8.RuneCountInString(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagNames lists every flag of fs, including those others add later.
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// closest is the candidate nearest to name by edit distance, or "" when
// none is near enough to be a typo (a third of the name's length, at least
// one edit). Names under three letters get no guess: too many are near.
func closest(name string, candidates []string) string {
	if utf8.RuneCountInString(name) < 3 || utf8.RuneCountInString(name) > 64 {
		return ""
	}
	limit := max(1, utf8.RuneCountInString(name)/3)
	best, bestD := "", limit+1
	for _, c := range candidates {
		if utf8.RuneCountInString(c) < 2 {
			continue
		}
		if d := editDistance(strings.ToLower(name), c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Damerau–Levenshtein distance (optimal string
// alignment) between a and b: insertions, deletions, substitutions and
// swaps of two neighbours each count one.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}

// envIgnored names the flags that have no variable: help and version
// are questions, not settings, and --json is a subcommand's output format.
func envIgnored(name string) bool {
	return name == "h" || name == "help" || name == "version" || name == "json"
}

// internalVariables are LFINIT_ variables lfinit sets for itself.
var internalVariables = []string{forward.ReexecVariable}

// isOptionVariable reports whether kv sets an LFINIT_ variable that is
// not one of internalVariables.
func isOptionVariable(kv string) bool {
	name, _, _ := strings.Cut(kv, "=")
	return strings.HasPrefix(name, "LFINIT_") && !slices.Contains(internalVariables, name)
}

// unknownVariables lists the LFINIT_ variables in env that no option of
// fs reads, each with the closest known variable when there is one: a typo
// such as LFINIT_GRCE would otherwise be ignored without a word.
func unknownVariables(fs *flag.FlagSet, env []string) []string {
	known := map[string]bool{}
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if !envIgnored(f.Name) {
			known[envName(f.Name)] = true
			names = append(names, envName(f.Name))
		}
	})
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !isOptionVariable(kv) || known[name] {
			continue
		}
		known[name] = true // once, however often it is set
		hint := shorten(name)
		if best := closestVariable(name, names); best != "" {
			hint += " (did you mean " + best + "?)"
		}
		out = append(out, hint)
	}
	return out
}

// closestVariable compares the parts after LFINIT_, where the typos are.
func closestVariable(name string, known []string) string {
	var bare []string
	for _, k := range known {
		bare = append(bare, strings.ToLower(strings.TrimPrefix(k, "LFINIT_")))
	}
	best := closest(strings.ToLower(strings.TrimPrefix(name, "LFINIT_")), bare)
	if best == "" {
		return ""
	}
	return "LFINIT_" + strings.ToUpper(best)
}

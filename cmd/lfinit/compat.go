package main

// The options and variables of tini 0.19, dumb-init 1.2.5 and catatonit,
// mapped onto lfinit's own, so an image whose init binary is swapped for
// lfinit keeps working, or is refused with the lfinit spelling to use.

import (
	"flag"
	"strconv"
	"strings"

	"github.com/light-fabric/lfinit/forward"
)

// peerShort are the single-letter options of the three peers; true means
// the option takes an argument (glued, -e143, or the next word, -e 143).
var peerShort = map[byte]bool{
	's': false, 'g': false, 'e': true, 'p': true, 'v': false, 'w': false, 'l': false, // tini
	'c': false, 'r': true, 'V': false, 'h': false, // dumb-init (and tini -h)
	'L': false, 'P': false, // catatonit (and its -g, -V)
}

// peerLong are dumb-init's long options lfinit does not have under the
// same name (its --rewrite, --version and --help are lfinit's own).
var peerLong = map[string]string{
	"single-child": "--forward-to=child",
	"verbose":      "--log-level=debug",
}

// licenseText is what tini -l and catatonit -L print.
const licenseText = `lfinit is licensed under the Apache License, Version 2.0 (SPDX: Apache-2.0).
The full text is the LICENSE file of its source, and
https://www.apache.org/licenses/LICENSE-2.0
`

// expandPeers rewrites the peers' options in args into lfinit's, up to "--"
// or the first word that is not an option (the command). A word that is a
// defined lfinit flag (-grace=5s) is left alone; another single-dash word
// is split into short options as getopt does (-sg, -vvv, -e143, -gvv), and
// left alone when one of its letters is no peer option, for fs.Parse to
// report. tini's -l and catatonit's -L set c.license.
func expandPeers(fs *flag.FlagSet, args []string, c *config) ([]string, error) {
	var out []string
	verbosity := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			return append(out, args[i:]...), nil
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := fs.Lookup(name); f != nil {
			out = append(out, a)
			if !hasValue && !isBoolFlag(f) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
			continue
		}
		if long, ok := peerLong[name]; ok && !hasValue {
			out = append(out, long)
			continue
		}
		if strings.HasPrefix(a, "--") {
			out = append(out, a)
			continue
		}
		words, used, err := expandShort(a[1:], args[i+1:], &verbosity, c)
		if err != nil {
			return nil, err
		}
		if words == nil {
			out = append(out, a) // not a cluster of peer options
			continue
		}
		out = append(out, words...)
		i += used
	}
	return out, nil
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// expandShort maps one cluster of short options (without its dash) onto
// lfinit flags; used is how many of the following words it took as an
// argument. It returns nil words when the word is no cluster of peer
// options (a letter that is none, a glued argument that does not fit).
func expandShort(cluster string, rest []string, verbosity *int, c *config) (words []string, used int, err error) {
	if !isCluster(cluster) {
		return nil, 0, nil
	}
	words = []string{}
	for j := 0; j < len(cluster); j++ {
		opt := cluster[j]
		arg := ""
		if peerShort[opt] {
			switch {
			case j+1 < len(cluster):
				arg = cluster[j+1:]
			case used < len(rest):
				arg = rest[used]
				used++
			default:
				return nil, 0, usagef("option -%c needs an argument (%s)", opt, peerHint[opt])
			}
			j = len(cluster)
		}
		w, err := peerWord(opt, arg, verbosity, c)
		if err != nil {
			return nil, 0, err
		}
		words = append(words, w...)
	}
	return words, used, nil
}

// isCluster reports whether cluster reads as getopt short options of the
// peers: known letters up to one that takes an argument, whose glued
// argument must look like one (-e143, -r15:3, -pTERM), so that a
// misspelt lfinit flag (-gracee) is reported as unknown, not as -g -r acee.
func isCluster(cluster string) bool {
	if strings.Contains(cluster, "=") {
		return false // peer options never use "="; -grac=5s is a misspelling
	}
	for j := 0; j < len(cluster); j++ {
		takesArg, ok := peerShort[cluster[j]]
		if !ok {
			return false
		}
		if takesArg && j+1 < len(cluster) {
			arg := cluster[j+1:]
			switch cluster[j] {
			case 'e':
				_, err := strconv.Atoi(arg)
				return err == nil
			case 'r':
				return strings.Contains(arg, ":")
			default:
				_, err := forward.Parse(arg)
				return err == nil
			}
		}
	}
	return true
}

// peerHint names the lfinit spelling of each short option that takes an argument.
var peerHint = map[byte]string{
	'e': "tini's -e CODE is lfinit's --exit-map CODE=0",
	'p': "tini's -p SIG is lfinit's --parent-death-signal SIG",
	'r': "dumb-init's -r FROM:TO is lfinit's --rewrite FROM:TO",
}

// peerWord is the lfinit spelling of one short option.
func peerWord(opt byte, arg string, verbosity *int, c *config) ([]string, error) {
	switch opt {
	case 's': // tini's subreaper: lfinit always is one when it is not PID 1
		return nil, nil
	case 'g':
		return []string{"--forward-to=group"}, nil
	case 'c':
		return []string{"--forward-to=child"}, nil
	case 'e':
		code, err := strconv.Atoi(arg)
		if err != nil || code < 0 || code > 255 {
			return nil, usagef("-e %q: tini's -e takes an exit code 0-255 (lfinit: --exit-map CODE=0)", arg)
		}
		return []string{"--exit-map=" + arg + "=0"}, nil
	case 'p':
		return []string{"--parent-death-signal=" + arg}, nil
	case 'r':
		return []string{"--rewrite=" + arg}, nil
	case 'v': // tini counts: -v info, -vv and more debug
		*verbosity++
		if *verbosity == 1 {
			return []string{"--log-level=info"}, nil
		}
		return []string{"--log-level=debug"}, nil
	case 'w':
		return []string{"--warn-on-reap"}, nil
	case 'l', 'L':
		c.license = true
		return nil, nil
	case 'h':
		return []string{"--help"}, nil
	case 'V':
		return []string{"--version"}, nil
	}
	// 'P', the only one left.
	return nil, usagef("catatonit's -P (pause without a command) is not supported: lfinit needs a command, e.g. lfinit -- sleep infinity")
}

// runEnv is a run's getenv over lookup (os.LookupEnv): a getenv answers ""
// both for an unset variable and an empty one, but tini counts
// TINI_KILL_PROCESS_GROUP as soon as it is set, whatever its value, empty
// included; so an empty one reads as "set" here.
func runEnv(lookup func(string) (string, bool)) func(string) string {
	return func(key string) string {
		v, ok := lookup(key)
		if key == "TINI_KILL_PROCESS_GROUP" && ok && v == "" {
			return "set"
		}
		return v
	}
}

// applyPeerEnv reads the peers' variables for what neither a flag nor an
// LFINIT_* variable set: TINI_KILL_PROCESS_GROUP and DUMB_INIT_SETSID for
// the forwarding target, TINI_VERBOSITY and DUMB_INIT_DEBUG for the log
// level. TINI_SUBREAPER is accepted and means nothing more. Bad values are
// refused even when overridden.
func applyPeerEnv(fs *flag.FlagSet, getenv func(string) string, target, level *string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	free := func(name string) bool { return !set[name] && getenv(envName(name)) == "" }

	group := getenv("TINI_KILL_PROCESS_GROUP") != "" // tini: set at all, whatever the value
	switch v := getenv("DUMB_INIT_SETSID"); v {
	case "", "0":
	case "1":
		group = true
	default:
		return usagef("DUMB_INIT_SETSID=%q is not 0 or 1 (lfinit: LFINIT_FORWARD_TO=child or group)", v)
	}
	if group && free("forward-to") {
		*target = "group"
	}

	verbose := -1 // tini's scale: 0 error, 1 warn, 2 info, 3 and up debug
	if v := getenv("TINI_VERBOSITY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return usagef("TINI_VERBOSITY=%q is not a number 0-3 (lfinit: LFINIT_LOG_LEVEL=error, warn, info or debug)", v)
		}
		verbose = n
	}
	switch v := getenv("DUMB_INIT_DEBUG"); v {
	case "", "0":
	case "1":
		verbose = max(verbose, 3)
	default:
		return usagef("DUMB_INIT_DEBUG=%q is not 0 or 1 (lfinit: LFINIT_LOG_LEVEL=debug)", v)
	}
	if verbose >= 0 && free("log-level") {
		*level = logLevels[len(logLevels)-1-min(verbose, 3)] // -v…-vvv: from error down to debug
	}
	return nil
}

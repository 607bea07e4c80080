package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/light-fabric/lfinit/forward"
)

// summary renders what the peers' options can change, so each case reads
// as the lfinit configuration it yields.
func summary(c *config) string {
	var parts []string
	switch {
	case c.help:
		return "help"
	case c.version:
		return "version"
	case c.license:
		return "license"
	}
	parts = append(parts, "to="+c.target.String(), "level="+strings.ToLower(c.logLevel.String()))
	var exits []string
	for from, to := range c.opts.ExitMap {
		exits = append(exits, fmt.Sprintf("%d=%d", from, to))
	}
	sort.Strings(exits)
	if len(exits) > 0 {
		parts = append(parts, "exit-map="+strings.Join(exits, ","))
	}
	if rw := (rewriteValue{c.opts.Rewrite}).String(); rw != "" {
		parts = append(parts, "rewrite="+rw)
	}
	if c.parentDeath != 0 {
		parts = append(parts, "pdeath="+forward.Name(c.parentDeath))
	}
	if c.warnOnReap {
		parts = append(parts, "warn-on-reap")
	}
	return strings.Join(append(parts, "argv="+strings.Join(c.argv, " ")), " ")
}

func TestPeerSpellings(t *testing.T) {
	const base = "to=child level=info"
	for _, tc := range []struct {
		args string
		env  []string
		want string
	}{
		// tini
		{"-s -- app", nil, base + " argv=app"},
		{"-g -- app", nil, "to=group level=info argv=app"},
		{"-sg -- app", nil, "to=group level=info argv=app"},
		{"-s -g app", nil, "to=group level=info argv=app"},
		{"-e 143 -- app", nil, base + " exit-map=143=0 argv=app"},
		{"-e143 -e 130 app", nil, base + " exit-map=130=0,143=0 argv=app"},
		{"-ge143 app", nil, "to=group level=info exit-map=143=0 argv=app"},
		{"-p SIGTERM -- app", nil, base + " pdeath=SIGTERM argv=app"},
		{"-pKILL app", nil, base + " pdeath=SIGKILL argv=app"},
		{"-v app", nil, base + " argv=app"},
		{"-v app", []string{"LFINIT_LOG_LEVEL", "warn"}, base + " argv=app"},
		{"-vv app", nil, "to=child level=debug argv=app"},
		{"-vvv app", nil, "to=child level=debug argv=app"},
		{"-v -v app", nil, "to=child level=debug argv=app"},
		{"-gvv -- app", nil, "to=group level=debug argv=app"},
		{"-w -- app", nil, base + " warn-on-reap argv=app"},
		{"-swg -- app", nil, "to=group level=info warn-on-reap argv=app"},
		{"-l", nil, "license"},
		{"-h", nil, "help"},
		// dumb-init
		{"-c -- app", nil, base + " argv=app"},
		{"--single-child -- app", nil, base + " argv=app"},
		{"-g -c app", nil, base + " argv=app"},
		{"-r 15:3 -- app", nil, base + " rewrite=15:3 argv=app"},
		{"-r15:3 -r 2:0 app", nil, base + " rewrite=2:0,15:3 argv=app"},
		{"--rewrite TERM:QUIT --rewrite=HUP:0 app", nil, base + " rewrite=1:0,15:3 argv=app"},
		{"-v -- app", nil, base + " argv=app"},
		{"--verbose -- app", nil, "to=child level=debug argv=app"},
		{"-V", nil, "version"},
		{"--version", nil, "version"},
		{"--help", nil, "help"},
		// catatonit
		{"-L", nil, "license"},
		{"-g app", nil, "to=group level=info argv=app"},
		// lfinit's own flags are never split into letters, and parsing stops at the command
		{"-grace=5s app", nil, base + " argv=app"},
		{"-rewrite 10:12 app", nil, base + " rewrite=10:12 argv=app"},
		{"--grace 5s -g app -g -e 1", nil, "to=group level=info argv=app -g -e 1"},
		{"-- -g", nil, base + " argv=-g"},
		{"app", []string{"LFINIT_REWRITE", "TERM:QUIT,INT:0"}, base + " rewrite=2:0,15:3 argv=app"},
		{"-r 10:12 app", []string{"LFINIT_REWRITE", "TERM:QUIT"}, base + " rewrite=10:12 argv=app"},
		{"app", []string{"LFINIT_PARENT_DEATH_SIGNAL", "HUP", "LFINIT_WARN_ON_REAP", "true"}, base + " pdeath=SIGHUP warn-on-reap argv=app"},
		// variables: tini's and dumb-init's apply where no lfinit flag or variable did
		{"app", []string{"TINI_SUBREAPER", "1"}, base + " argv=app"},
		{"app", []string{"TINI_KILL_PROCESS_GROUP", "1"}, "to=group level=info argv=app"},
		{"app", []string{"TINI_KILL_PROCESS_GROUP", "0"}, "to=group level=info argv=app"}, // tini: set at all
		{"app", []string{"TINI_KILL_PROCESS_GROUP", "1", "LFINIT_FORWARD_TO", "child"}, base + " argv=app"},
		{"-c app", []string{"TINI_KILL_PROCESS_GROUP", "1"}, base + " argv=app"},
		{"app", []string{"DUMB_INIT_SETSID", "1"}, "to=group level=info argv=app"},
		{"app", []string{"DUMB_INIT_SETSID", "0"}, base + " argv=app"},
		{"app", []string{"TINI_VERBOSITY", "0"}, "to=child level=error argv=app"},
		{"app", []string{"TINI_VERBOSITY", "1"}, "to=child level=warn argv=app"},
		{"app", []string{"TINI_VERBOSITY", "2"}, base + " argv=app"},
		{"app", []string{"TINI_VERBOSITY", "3"}, "to=child level=debug argv=app"},
		{"app", []string{"TINI_VERBOSITY", "9"}, "to=child level=debug argv=app"},
		{"-v app", []string{"TINI_VERBOSITY", "3"}, base + " argv=app"},
		{"app", []string{"DUMB_INIT_DEBUG", "1"}, "to=child level=debug argv=app"},
		{"app", []string{"DUMB_INIT_DEBUG", "0"}, base + " argv=app"},
		{"app", []string{"DUMB_INIT_DEBUG", "1", "TINI_VERBOSITY", "1"}, "to=child level=debug argv=app"},
		{"app", []string{"DUMB_INIT_DEBUG", "1", "LFINIT_LOG_LEVEL", "warn"}, "to=child level=warn argv=app"},
	} {
		c, err := parseArgs(strings.Fields(tc.args), envOf(tc.env...))
		if err != nil {
			t.Errorf("%q %v: %v", tc.args, tc.env, err)
			continue
		}
		if got := summary(c); got != tc.want {
			t.Errorf("%q %v:\n got  %s\n want %s", tc.args, tc.env, got, tc.want)
		}
	}
}

func TestPeerRefusalsNameTheEquivalent(t *testing.T) {
	for _, tc := range []struct {
		args string
		env  []string
		msg  string
	}{
		{"-P", nil, "lfinit needs a command, e.g. lfinit -- sleep infinity"},
		{"-gP app", nil, "lfinit needs a command"},
		{"-e", nil, "--exit-map CODE=0"},
		{"-e 300 app", nil, "--exit-map CODE=0"},
		{"-e x app", nil, "--exit-map CODE=0"},
		{"-p", nil, "--parent-death-signal SIG"},
		{"-p NOPE app", nil, "unknown signal"},
		{"-r", nil, "--rewrite FROM:TO"},
		{"-r 15 app", nil, "not FROM:TO"},
		{"-r 15:99 app", nil, "out of range"},
		{"--rewrite CHLD:TERM app", nil, "cannot be caught"},
		{"app", []string{"LFINIT_REWRITE", "TERM"}, "LFINIT_REWRITE"},
		{"app", []string{"DUMB_INIT_SETSID", "yes"}, "LFINIT_FORWARD_TO=child or group"},
		{"app", []string{"DUMB_INIT_DEBUG", "yes"}, "LFINIT_LOG_LEVEL=debug"},
		{"app", []string{"TINI_VERBOSITY", "loud"}, "LFINIT_LOG_LEVEL="},
		{"app", []string{"TINI_VERBOSITY", "-1"}, "LFINIT_LOG_LEVEL="},
		{"-gx app", nil, "-gx"},
		{"-gracee 5s app", nil, "-gracee"},
		{"-grac=5s app", nil, "-grac"},
	} {
		_, err := parseArgs(strings.Fields(tc.args), envOf(tc.env...))
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(ue.msg, tc.msg) || strings.Contains(ue.msg, "\n") {
			t.Errorf("%q %v = %v, want a one-line usage error saying %q", tc.args, tc.env, err, tc.msg)
		}
	}
}

func TestPeerRefusalExits2BeforeAnythingStarts(t *testing.T) {
	var out, errOut strings.Builder
	code := run([]string{"lfinit", "-P"}, nil, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "lfinit needs a command") || strings.Count(errOut.String(), "\n") != 1 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}

func TestLicense(t *testing.T) {
	var out, errOut strings.Builder
	if code := run([]string{"lfinit", "-l"}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "Apache-2.0") {
		t.Fatalf("-l: exit %d, %q %q", code, out.String(), errOut.String())
	}
}

func TestHelpNamesTheNewOptionsAndThePeers(t *testing.T) {
	var b strings.Builder
	writeHelp(&b)
	for _, want := range []string{"--rewrite", "LFINIT_REWRITE", "--parent-death-signal", "LFINIT_PARENT_DEATH_SIGNAL",
		"--warn-on-reap", "LFINIT_WARN_ON_REAP", "TINI_KILL_PROCESS_GROUP", "DUMB_INIT_SETSID", "Switching from tini"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("--help lacks %s", want)
		}
	}
}

// TestTiniKillProcessGroupSetButEmpty: tini tests that the variable is
// set, so an empty one forwards to the group too; an unset one does not.
func TestTiniKillProcessGroupSetButEmpty(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"TINI_KILL_PROCESS_GROUP": ""}, "group"},
		{map[string]string{}, "child"},
		{map[string]string{"TINI_KILL_PROCESS_GROUP": "", "LFINIT_FORWARD_TO": "child"}, "child"},
	} {
		lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		c, err := parseArgs([]string{"app"}, runEnv(lookup))
		if err != nil {
			t.Fatalf("%v: %v", tc.env, err)
		}
		if got := c.target.String(); got != tc.want {
			t.Errorf("%v: forward to %s, want %s", tc.env, got, tc.want)
		}
	}
}

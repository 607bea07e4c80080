package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHookCommandForms(t *testing.T) {
	for in, want := range map[string][]string{
		`/bin/deregister`:                    {"/bin/deregister"},
		`["/bin/deregister","--id","web 1"]`: {"/bin/deregister", "--id", "web 1"},
		` ["deregister"] `:                   {"deregister"},
		``:                                   nil,
	} {
		got, err := parseHook(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("parseHook(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		`/bin/deregister --id x`: "JSON array",
		`["/bin/x",`:             "not a JSON array",
		`[]`:                     "must start with the program",
		`[""]`:                   "must start with the program",
		`[1,2]`:                  "not a JSON array",
	} {
		if _, err := parseHook(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("parseHook(%q) = %v, want an error saying %q", in, err, msg)
		}
	}
}

func TestHookTimeoutDefaultsToTheDrainDelay(t *testing.T) {
	c, err := parseArgs([]string{"--drain-delay", "3s", "--on-shutdown", `["/hook","a"]`, "app"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.opts.Budget.Hook != 3*time.Second || !slices.Equal(c.hook, []string{"/hook", "a"}) {
		t.Fatalf("hook %q timeout %v", c.hook, c.opts.Budget.Hook)
	}
	c, err = parseArgs([]string{"app"}, envOf("LFINIT_ON_SHUTDOWN", "/hook", "LFINIT_ON_SHUTDOWN_TIMEOUT", "2s"))
	if err != nil || c.opts.Budget.Hook != 2*time.Second || !slices.Equal(c.hook, []string{"/hook"}) {
		t.Fatalf("from the variables: %v %q %v", err, c.hook, c.opts.Budget.Hook)
	}
	if c, err = parseArgs([]string{"app"}, noEnv); err != nil || c.opts.Budget.Hook != 0 {
		t.Fatalf("no hook: %v %v", err, c.opts.Budget.Hook)
	}
}

func TestHookOptionErrors(t *testing.T) {
	for args, msg := range map[string]string{
		"--on-shutdown /hook app":                                     "set --on-shutdown-timeout",
		"--on-shutdown-timeout 2s app":                                "--on-shutdown is not",
		"--grace 5s --on-shutdown /hook --on-shutdown-timeout 5s app": "shorter than --grace",
		"--grace 5s --on-shutdown /hook --on-shutdown-timeout 9s app": "shorter than --grace",
		"--on-shutdown-timeout 2 --on-shutdown /hook app":             "needs a unit",
	} {
		_, err := parseArgs(strings.Fields(args), noEnv)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want a usage error saying %q", args, err, msg)
		}
	}
}

func TestBudgetShowsTheHook(t *testing.T) {
	var out strings.Builder
	budget, _ := lookupSubcommand("budget")
	code, err := budget.parseAndRun([]string{"--grace", "10s", "--drain-delay", "2s", "--on-shutdown", "/hook", "--on-shutdown-timeout", "5s"}, noEnv, &out)
	if err != nil || code != 0 {
		t.Fatalf("code %d, %v", code, err)
	}
	for _, want := range []string{"t0             shutdown hook starts", "t0+5s          at the latest: shutdown hook killed",
		"t0+5s          at the latest: stop signal forwarded (when the hook ends, not before t0+2s)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("timeline lacks %q:\n%s", want, out.String())
		}
	}
	// From the image's variables, as a run reads them.
	code, err = budget.parseAndRun(nil, envOf("LFINIT_ON_SHUTDOWN", "/hook"), &out)
	if code != 2 || err == nil || !strings.Contains(err.Error(), "--on-shutdown-timeout") {
		t.Fatalf("hook without a timeout: %d %v", code, err)
	}
}

package main

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/forward"
)

func noEnv(string) string { return "" }

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"0": 0, "250ms": 250 * time.Millisecond, "8s": 8 * time.Second, "1m30s": 90 * time.Second, " 2s ": 2 * time.Second, "0s": 0} {
		got, err := parseDuration(in)
		if err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{"5": "needs a unit", "0.5": "needs a unit", "-1s": "negative", "soon": "not a duration", "": "not a duration", "5 s": "not a duration"} {
		if _, err := parseDuration(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("parseDuration(%q) = %v, want an error saying %q", in, err, msg)
		}
	}
}

func TestDefaults(t *testing.T) {
	c, err := parseArgs([]string{"app"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	o := c.opts
	if o.Budget.Grace != 8*time.Second || o.Budget.Floor != 250*time.Millisecond || o.Budget.DrainDelay != 0 {
		t.Errorf("budget defaults %+v", o.Budget)
	}
	if len(o.ShutdownSignals) != 2 || !slices.Contains(o.ShutdownSignals, syscall.SIGTERM) || !slices.Contains(o.ShutdownSignals, syscall.SIGINT) {
		t.Errorf("shutdown signals %v", o.ShutdownSignals)
	}
	if o.StopSignal != 0 || o.DeadlineSignal != 0 || o.NoDeadline || c.target != forward.Child || c.logFormat != "text" || c.keepFDs != 0 {
		t.Errorf("defaults %+v", c)
	}
}

func TestEveryFlag(t *testing.T) {
	c, err := parseArgs(strings.Fields("--grace 20s --floor=1s --drain-delay 5s --shutdown-signals TERM,SIGQUIT,2 --stop-signal WINCH "+
		"--deadline-signal 10 --forward-to group --exit-map 143=0 --exit-map 1=3,2=4 --preserve-fds 2 --log-format json --log-level debug -- app -x"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	o := c.opts
	if o.Budget.Grace != 20*time.Second || o.Budget.Floor != time.Second || o.Budget.DrainDelay != 5*time.Second {
		t.Errorf("budget %+v", o.Budget)
	}
	if len(o.ShutdownSignals) != 3 || o.ShutdownSignals[1] != syscall.SIGQUIT || o.ShutdownSignals[2] != syscall.SIGINT {
		t.Errorf("shutdown signals %v", o.ShutdownSignals)
	}
	if o.StopSignal != syscall.SIGWINCH || o.DeadlineSignal != syscall.SIGUSR1 || c.target != forward.Group || c.keepFDs != 2 {
		t.Errorf("signals/target %+v", c)
	}
	if o.ExitMap[143] != 0 || o.ExitMap[1] != 3 || o.ExitMap[2] != 4 || len(o.ExitMap) != 3 {
		t.Errorf("exit map %v", o.ExitMap)
	}
	if c.logFormat != "json" || c.logLevel.String() != "DEBUG" {
		t.Errorf("log %s %v", c.logFormat, c.logLevel)
	}
	if strings.Join(c.argv, " ") != "app -x" {
		t.Errorf("argv %q", c.argv)
	}
}

func TestParsingStopsAtTheFirstWord(t *testing.T) {
	c, err := parseArgs([]string{"--grace=2s", "mytool", "-v", "--grace", "9s"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.argv, " ") != "mytool -v --grace 9s" || c.opts.Budget.Grace != 2*time.Second {
		t.Fatalf("argv %q grace %v", c.argv, c.opts.Budget.Grace)
	}
}

func TestEnvironmentAndFlagPrecedence(t *testing.T) {
	env := envOf("LFINIT_GRACE", "30s", "LFINIT_FLOOR", "2s", "LFINIT_DEADLINE_SIGNAL", "none", "LFINIT_FORWARD_TO", "group",
		"LFINIT_EXIT_MAP", "143=0,130=0", "LFINIT_SHUTDOWN_SIGNALS", "QUIT")
	c, err := parseArgs([]string{"--grace", "10s", "app"}, env)
	if err != nil {
		t.Fatal(err)
	}
	o := c.opts
	if o.Budget.Grace != 10*time.Second {
		t.Errorf("flag must win: grace %v", o.Budget.Grace)
	}
	if o.Budget.Floor != 2*time.Second || !o.NoDeadline || c.target != forward.Group || o.ExitMap[130] != 0 || len(o.ExitMap) != 2 {
		t.Errorf("environment not applied: %+v", c)
	}
	if len(o.ShutdownSignals) != 1 || o.ShutdownSignals[0] != syscall.SIGQUIT {
		t.Errorf("shutdown signals %v", o.ShutdownSignals)
	}
	c, err = parseArgs([]string{"--exit-map", "5=6", "app"}, envOf("LFINIT_EXIT_MAP", "5=7,8=9"))
	if err != nil || c.opts.ExitMap[5] != 6 || len(c.opts.ExitMap) != 1 {
		t.Errorf("--exit-map must replace LFINIT_EXIT_MAP: %v %v", c.opts.ExitMap, err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  []string
		msg  string
	}{
		{[]string{}, nil, "no command"},
		{[]string{"--grace", "5", "app"}, nil, `--grace: "5" needs a unit`},
		{[]string{"--grace", "2s", "--drain-delay", "2s", "app"}, nil, "shorter than the grace"},
		{[]string{"--stop-signal", "NOPE", "app"}, nil, "unknown signal"},
		{[]string{"--shutdown-signals", "TERM,STOP", "app"}, nil, "cannot be caught"},
		{[]string{"--shutdown-signals", "CHLD", "app"}, nil, "cannot be caught"},
		{[]string{"--forward-to", "all", "app"}, nil, "child, group"},
		{[]string{"--exit-map", "300=0", "app"}, nil, "FROM=TO"},
		{[]string{"--exit-map", "a=b", "app"}, nil, "FROM=TO"},
		{[]string{"--preserve-fds", "-1", "app"}, nil, "count"},
		{[]string{"--log-level", "loud", "app"}, nil, "debug, info"},
		{[]string{"--bogus", "app"}, nil, "not defined: --bogus"},
		{[]string{"app"}, []string{"LFINIT_FLOOR", "3"}, "LFINIT_FLOOR"},
		{[]string{"app"}, []string{"LFINIT_FORWARD_TO", "tree"}, "LFINIT_FORWARD_TO"},
		// Values that can never work, refused as they are set (checks.go).
		{[]string{"--ready-tcp", "localhost:99999", "app"}, nil, `--ready-tcp: port "99999" is not a number from 1 to 65535`},
		{[]string{"--ready-tcp", "127.0.0.1:0", "app"}, nil, `--ready-tcp: port "0"`},
		{[]string{"--ready-tcp", "bad_host!:80", "app"}, nil, `--ready-tcp: host "bad_host!"`},
		{[]string{"--ready-http", "http://127.0.0.1:99999/x", "app"}, nil, `--ready-http: port "99999"`},
		{[]string{"--ready-http", "http://:99999/", "app"}, nil, `--ready-http: port "99999"`},
		{[]string{"--metrics-addr", "127.0.0.1:99999", "app"}, nil, `--metrics-addr: port "99999" is not a number from 0 to 65535`},
		{[]string{"--metrics-addr", "bad host:9090", "app"}, nil, `--metrics-addr: host "bad host"`},
		{[]string{"--push-gateway", "http://127.0.0.1:99999", "app"}, nil, `--push-gateway: port "99999"`},
		{[]string{"--push-job=", "app"}, nil, "--push-job: the job name of the push cannot be empty"},
		{[]string{"--pidfile", "/run/", "app"}, nil, "--pidfile: \"/run/\" ends in a separator"},
		{[]string{"--pidfile", "/", "app"}, nil, "--pidfile"},
		{[]string{"--pidfile", ".", "app"}, nil, "--pidfile: \".\" is a directory"},
		{[]string{"--warn-on-reap=maybe", "app"}, nil, `invalid value "maybe" for --warn-on-reap: "maybe" is not a boolean`},
		{[]string{"-h=maybe", "app"}, nil, `for -h:`},
		{[]string{"app"}, []string{"LFINIT_READY_TCP", "localhost:80800"}, "LFINIT_READY_TCP: port"},
		{[]string{"app"}, []string{"LFINIT_PUSH_GATEWAY", "http://pgw:0"}, "LFINIT_PUSH_GATEWAY: port"},
		{[]string{"app"}, []string{"LFINIT_WARN_ON_REAP", "maybe"}, "LFINIT_WARN_ON_REAP"},
		{[]string{"--user", ":app", "app"}, nil, `--user: ":app" names no user`},
		{[]string{"app"}, []string{"LFINIT_USER", "1000:4294967295"}, "LFINIT_USER"},
	} {
		_, err := parseArgs(tc.args, envOf(tc.env...))
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(ue.msg, tc.msg) {
			t.Errorf("parseArgs(%v, %v) = %v, want a usage error saying %q", tc.args, tc.env, err, tc.msg)
		}
	}
}

func TestDeadlineSignalNoneAndBack(t *testing.T) {
	c, err := parseArgs([]string{"--deadline-signal", "none", "--deadline-signal", "KILL", "app"}, noEnv)
	if err != nil || c.opts.NoDeadline || c.opts.DeadlineSignal != syscall.SIGKILL {
		t.Fatalf("%+v %v", c.opts, err)
	}
}

func TestHelpListsEveryVariable(t *testing.T) {
	var b strings.Builder
	writeHelp(&b)
	for _, v := range []string{"LFINIT_GRACE", "LFINIT_FLOOR", "LFINIT_DRAIN_DELAY", "LFINIT_SHUTDOWN_SIGNALS", "LFINIT_STOP_SIGNAL",
		"LFINIT_DEADLINE_SIGNAL", "LFINIT_FORWARD_TO", "LFINIT_EXIT_MAP", "LFINIT_PRESERVE_FDS", "LFINIT_LOG_FORMAT", "LFINIT_LOG_LEVEL"} {
		if !strings.Contains(b.String(), v) {
			t.Errorf("--help lacks %s", v)
		}
	}
	c, err := parseArgs([]string{"--help"}, noEnv)
	if err != nil || !c.help {
		t.Errorf("--help: %v", err)
	}
}

func TestSubcommandHelpAndUsageErrors(t *testing.T) {
	for _, name := range []string{"status", "probe", "budget"} {
		var out, errOut strings.Builder
		args := []string{"--help"}
		if name == "probe" {
			args = []string{"ready", "--help"}
		}
		if code := runSubcommand(name, args, noEnv, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "usage: lfinit "+name) {
			t.Errorf("%s --help: exit %d, %q %q", name, code, out.String(), errOut.String())
		}
		if code := runSubcommand(name, []string{"--bogus"}, noEnv, &out, &errOut); code != 2 {
			t.Errorf("%s --bogus: exit %d, want 2", name, code)
		}
	}
	var out, errOut strings.Builder
	if code := runSubcommand("status", nil, noEnv, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "LFINIT_STATUS_FILE") {
		t.Errorf("status without a file: exit %d, %q", code, errOut.String())
	}
}

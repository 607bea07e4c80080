package main

import (
	"os"
	"reflect"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// TestParseSignalList checks the comma-list parser, including the empty list.
func TestParseSignalList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []unix.Signal
	}{
		{"", nil},
		{"15", []unix.Signal{15}},
		{"1,2, 3,15", []unix.Signal{1, 2, 3, 15}},
		{"64,", []unix.Signal{64}},
	} {
		got, err := parseSignalList(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseSignalList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"0", "65", "TERM", "1;2", "-1"} {
		if _, err := parseSignalList(bad); err == nil {
			t.Errorf("parseSignalList(%q) succeeded, want error", bad)
		}
	}
}

// TestDieSet checks that -ignore removes signals from -die-on.
func TestDieSet(t *testing.T) {
	got := dieSet([]unix.Signal{1, 2, 3, 15}, []unix.Signal{15, 10})
	want := map[unix.Signal]bool{1: true, 2: true, 3: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dieSet = %v, want %v", got, want)
	}
}

// TestCaughtSignals checks that signals the runtime or tests rely on are never caught.
func TestCaughtSignals(t *testing.T) {
	sigs := caughtSignals()
	if len(sigs) != 25+31 {
		t.Errorf("caught %d signals, want 56", len(sigs))
	}
	for _, s := range []unix.Signal{unix.SIGCHLD, unix.SIGURG, unix.SIGPIPE, unix.SIGKILL, unix.SIGSTOP} {
		if slices.Contains(sigs, os.Signal(s)) {
			t.Errorf("%v must not be caught", s)
		}
	}
	for _, s := range []unix.Signal{unix.SIGTERM, unix.SIGHUP, unix.SIGUSR1, 34, 64} {
		if !slices.Contains(sigs, os.Signal(s)) {
			t.Errorf("%v should be caught", s)
		}
	}
}

// TestTerminatesByDefault spot-checks the default-action table.
func TestTerminatesByDefault(t *testing.T) {
	for sig, want := range map[unix.Signal]bool{
		unix.SIGTERM: true, unix.SIGHUP: true, unix.SIGQUIT: true, unix.SIGUSR1: true, 40: true,
		unix.SIGCONT: false, unix.SIGWINCH: false, unix.SIGTSTP: false, unix.SIGCHLD: false,
	} {
		if got := terminatesByDefault(sig); got != want {
			t.Errorf("terminatesByDefault(%v) = %v, want %v", sig, got, want)
		}
	}
}

// TestReexecArgs checks that every re-exec passes the record path along.
func TestReexecArgs(t *testing.T) {
	got := reexecArgs(modeOrphanParent, "/tmp/r", "-n", "5", "-base", "2000")
	want := []string{"-mode", "orphan-parent", "-record=/tmp/r", "-n", "5", "-base", "2000"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reexecArgs = %q, want %q", got, want)
	}
	c, err := parseFlags(got)
	if err != nil || c.mode != modeOrphanParent || c.record != "/tmp/r" || c.n != 5 || c.base != 2000 {
		t.Errorf("parseFlags(reexecArgs) = %+v, %v", c, err)
	}
}

// TestParseFlags checks defaults, double-dash flags and rejected combinations.
func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"--ignore", "15", "-exit", "3", "--after=100ms"})
	if err != nil {
		t.Fatal(err)
	}
	if c.dieOn != "1,2,3,15" || c.ignore != "15" || c.exitCode != 3 || c.after.String() != "100ms" {
		t.Errorf("parseFlags = %+v", c)
	}
	if c, _ := parseFlags(nil); c.exitCode >= 0 {
		t.Errorf("default -exit = %d, want none", c.exitCode)
	}
	for _, bad := range [][]string{{"-after", "1s"}, {"-orphans", "-1"}, {"-base", "-1"}, {"extra"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("parseFlags(%q) succeeded, want error", bad)
		}
	}
}

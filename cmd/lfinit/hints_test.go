package main

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/light-fabric/lfinit/forward"
)

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"grace", "grace", 0}, {"grce", "grace", 1}, {"garce", "grace", 1}, {"gracee", "grace", 1},
		{"", "abc", 3}, {"floor", "grace", 5}, {"lgo-level", "log-level", 1}, {"stop-timout", "stop-timeout", 1},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

func TestUnknownFlagSuggestsClosest(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"--grce", "did you mean --grace?"},
		{"--stop-timout=2s", "did you mean --stop-timeout?"},
		{"--metric-addr=:9090", "did you mean --metrics-addr?"},
		{"--push-gatway=http://x", "did you mean --push-gateway?"},
		{"-GRACE", "did you mean --grace?"},
	} {
		_, err := parseArgs([]string{tc.arg, "app"}, noEnv)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(ue.msg, tc.want) || !strings.Contains(ue.msg, "not defined: --") {
			t.Errorf("%s: %v, want %q", tc.arg, err, tc.want)
		}
	}
	// Nothing near: no guess rather than a wrong one.
	for _, arg := range []string{"--zzzzzzzz", "--x", "--entirely-different"} {
		_, err := parseArgs([]string{arg, "app"}, noEnv)
		if err == nil || strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%s: %v, want no suggestion", arg, err)
		}
	}
	// Subcommands suggest from their own flags.
	var out, errOut strings.Builder
	if code := runSubcommand("budget", []string{"--grase=2s"}, noEnv, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "did you mean --grace?") {
		t.Errorf("budget --grase: exit %d, %q", code, errOut.String())
	}
}

func TestLongValuesAreShortened(t *testing.T) {
	huge := strings.Repeat("x", 256<<10)
	for _, args := range [][]string{
		{"--grace", huge, "app"},
		{"--" + huge, "app"},
		{"--forward-to", huge, "app"},
		{"--exit-map", huge, "app"},
	} {
		_, err := parseArgs(args, noEnv)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Fatalf("%.20s…: %v", args[0], err)
		}
		var stderr bytes.Buffer
		if code := usage(&stderr, ue.msg); code != 2 {
			t.Errorf("exit %d", code)
		}
		line := stderr.String()
		if len(line) > maxMessage+64 || strings.Count(line, "\n") != 1 || !strings.Contains(line, "…") || !utf8.ValidString(line) {
			t.Errorf("%.20s…: %d bytes: %.200q", args[0], len(line), line)
		}
	}
	// Through a variable too.
	_, err := parseArgs([]string{"app"}, envOf("LFINIT_FLOOR", huge))
	if got := shortenMessage(err.Error()); len(got) > maxMessage+8 || !strings.Contains(got, "LFINIT_FLOOR") {
		t.Errorf("variable: %d bytes: %.200q", len(got), got)
	}
	// Short values are left alone.
	if got := shortenMessage(`--grace: "5" needs a unit`); got != `--grace: "5" needs a unit` {
		t.Errorf("short message changed: %q", got)
	}
	// A cut never ends inside an escape or a rune.
	got := shortenMessage(`bad "` + strings.Repeat(`é\"`, 100) + `"`)
	if !utf8.ValidString(got) || strings.Contains(got, `\…`) {
		t.Errorf("cut: %q", got)
	}
}

func TestUnknownVariables(t *testing.T) {
	fs := newFlagSet(&config{})
	env := []string{"LFINIT_GRCE=2s", "LFINIT_GRACE=3s", "PATH=/bin", forward.ReexecVariable + "=1", "LFINIT_WHATEVER=1", "LFINIT_GRCE=4s", "LFINIT_PUSH_GATEWAY=http://x"}
	got := unknownVariables(fs, env)
	want := []string{"LFINIT_GRCE (did you mean LFINIT_GRACE?)", "LFINIT_WHATEVER"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("unknownVariables = %q, want %q", got, want)
	}

	var buf bytes.Buffer
	warnUnknownVariables(env, slog.New(slog.NewTextHandler(&buf, nil)))
	if n := strings.Count(buf.String(), "\n"); n != 1 || !strings.Contains(buf.String(), "level=WARN") || !strings.Contains(buf.String(), "LFINIT_GRCE") {
		t.Errorf("warning: %q", buf.String())
	}
	buf.Reset()
	warnUnknownVariables([]string{"LFINIT_GRACE=1s", forward.ReexecVariable + "=1"}, slog.New(slog.NewTextHandler(&buf, nil)))
	if buf.Len() != 0 {
		t.Errorf("warned about known variables: %q", buf.String())
	}
}

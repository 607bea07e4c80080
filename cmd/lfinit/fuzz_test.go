package main

import (
	"strings"
	"testing"

	"github.com/light-fabric/lfinit/forward"
)

// FuzzParseArgs: any command line and environment either is a usage error
// or a configuration that can run: a valid budget, a command, no negative
// duration, exit codes in 0-255, rewrites of caught signals only (the
// peers' spellings included).
func FuzzParseArgs(f *testing.F) {
	for _, seed := range [][2]string{
		{"--grace\x0020s\x00--drain-delay=5s\x00--\x00app", ""},
		{"--exit-map\x00143=0\x00--stop-signal\x00QUIT\x00app\x00-v", "LFINIT_FLOOR=1s"},
		{"--deadline-signal=none\x00--forward-to\x00group\x00app", "LFINIT_SHUTDOWN_SIGNALS=TERM,INT,HUP"},
		{"--ready-tcp\x00127.0.0.1:80\x00app", "LFINIT_STOP_TIMEOUT=30s"},
		{"--grace\x005\x00app", ""},
		{"app", "LFINIT_EXIT_MAP=1=2,3=4"},
		{"-sg\x00-e143\x00-vvv\x00--\x00app", "TINI_VERBOSITY=2"},
		{"-r\x0015:3\x00-r2:0\x00--single-child\x00app", "DUMB_INIT_SETSID=1"},
		{"-gvv\x00-pTERM\x00-w\x00app\x00-g", "TINI_KILL_PROCESS_GROUP=1"},
		{"-grace=5s\x00-e\x00app", "DUMB_INIT_DEBUG=1"},
		{"--rewrite=TERM:QUIT,INT:0\x00app", "LFINIT_REWRITE=HUP:0"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, argv, env string) {
		vars := map[string]string{}
		for _, kv := range strings.Split(env, "\x00") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				vars[k] = v
			}
		}
		c, err := parseArgs(strings.Split(argv, "\x00"), func(k string) string { return vars[k] })
		if err != nil {
			if _, ok := err.(*usageError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if c.help || c.version || c.license {
			return
		}
		b := c.opts.Budget
		if len(c.argv) == 0 || b.Validate() != nil || b.Grace < 0 || b.Floor < 0 || b.DrainDelay < 0 || c.keepFDs < 0 {
			t.Fatalf("accepted an unusable configuration: %+v", c)
		}
		for from, to := range c.opts.ExitMap {
			if from < 0 || from > 255 || to < 0 || to > 255 {
				t.Fatalf("exit map %d=%d out of range", from, to)
			}
		}
		for from, to := range c.opts.Rewrite {
			if !forward.IsRelayed(from) || to < 0 || to > forward.RTMax {
				t.Fatalf("rewrite %d:%d: FROM must be caught, TO 0 or a signal", from, to)
			}
		}
		if c.parentDeath < 0 || c.parentDeath > forward.RTMax {
			t.Fatalf("parent-death signal %d", c.parentDeath)
		}
		if c.stopTimeout > 0 && !b.Fits(c.stopTimeout, c.allowance) {
			t.Fatalf("accepted a budget that does not fit the stop timeout: %+v", c)
		}
	})
}

// FuzzParseDuration: accepted durations are never negative, and a bare
// number other than 0 is never accepted.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"0", "8s", "250ms", "5", "-1s", "1.5h", "0.0", "+3s", "1e3s", "inf", "NaN", "9223372036854775807ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("parseDuration(%q) = %v", s, d)
		}
		if trimmed := strings.TrimSpace(s); trimmed != "0" && strings.Trim(trimmed, "0123456789.+-") == "" {
			t.Fatalf("parseDuration(%q) accepted a bare number", s)
		}
	})
}

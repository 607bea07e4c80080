package main

import (
	"strings"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/core"
)

func TestDaemonOptions(t *testing.T) {
	c, err := parseArgs([]string{"app"}, noEnv)
	if err != nil || c.opts.Daemon != core.DaemonNone || c.opts.PidfileTimeout != 5*time.Second {
		t.Fatalf("defaults: %+v, %v", c.opts, err)
	}
	c, err = parseArgs([]string{"--pidfile", "/run/app.pid", "--pidfile-timeout=2s", "app"}, noEnv)
	if err != nil || c.opts.Daemon != core.DaemonPidfile || c.opts.Pidfile != "/run/app.pid" || c.opts.PidfileTimeout != 2*time.Second {
		t.Fatalf("--pidfile: %+v, %v", c.opts, err)
	}
	c, err = parseArgs([]string{"app"}, envOf("LFINIT_PIDFILE", "/run/x.pid", "LFINIT_PIDFILE_TIMEOUT", "1s"))
	if err != nil || c.opts.Daemon != core.DaemonPidfile || c.opts.PidfileTimeout != time.Second {
		t.Fatalf("LFINIT_PIDFILE: %+v, %v", c.opts, err)
	}
	c, err = parseArgs([]string{"app"}, envOf("LFINIT_WAIT_FOR", "tree"))
	if err != nil || c.opts.Daemon != core.DaemonTree {
		t.Fatalf("LFINIT_WAIT_FOR=tree: %+v, %v", c.opts, err)
	}
	c, err = parseArgs([]string{"--wait-for=child", "app"}, envOf("LFINIT_WAIT_FOR", "tree"))
	if err != nil || c.opts.Daemon != core.DaemonNone {
		t.Fatalf("the flag wins: %+v, %v", c.opts, err)
	}
	for want, bad := range map[string][]string{
		"exclude each other": {"--pidfile=/x.pid", "--wait-for=tree", "app"},
		"not one of child":   {"--wait-for=forest", "app"},
		"needs a unit":       {"--pidfile-timeout=5", "app"},
	} {
		_, err := parseArgs(bad, noEnv)
		if _, ok := err.(*usageError); !ok || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want a usage error saying %q", bad, err, want)
		}
	}
}

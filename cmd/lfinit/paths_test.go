package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRelativePathsAreMadeAbsolute: lfinit moves to / once the child
// runs, so its own relative paths are resolved against the start
// directory first; none and the absolute ones stay.
func TestRelativePathsAreMadeAbsolute(t *testing.T) {
	wd, _ := os.Getwd()
	c, err := parseArgs([]string{"--status-file", "s.json", "--pidfile", "run/d.pid", "--termination-log", "none", "app"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.absPaths(); err != nil {
		t.Fatal(err)
	}
	if c.statusFile != filepath.Join(wd, "s.json") || c.opts.Pidfile != filepath.Join(wd, "run/d.pid") || c.termLog != "none" {
		t.Fatalf("status %q pidfile %q termination log %q", c.statusFile, c.opts.Pidfile, c.termLog)
	}
	c, err = parseArgs([]string{"--termination-log", "/dev/termination-log", "--status-file", "/run/s.json", "app"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.absPaths(); err != nil || c.termLog != "/dev/termination-log" || c.statusFile != "/run/s.json" {
		t.Fatalf("absolute paths changed: %q %q (%v)", c.termLog, c.statusFile, err)
	}
}

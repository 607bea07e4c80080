package main

import (
	"fmt"
	"path/filepath"

	"github.com/light-fabric/lfinit/notify"
)

// absPaths makes lfinit's own relative paths (--status-file, --pidfile,
// --termination-log, --ready-notify's directory) absolute against the
// start directory: once the child runs, lfinit moves to / so that it pins
// no mount, and they must still
// name the files the user meant. The child keeps the start directory, and
// the subcommands (an exec probe runs in the container's working
// directory) resolve their --status-file against their own.
func (c *config) absPaths() error {
	for _, p := range []*string{&c.statusFile, &c.opts.Pidfile, &c.termLog, &c.readyNotify} {
		if *p == "" || (p == &c.termLog && *p == "none") || (p == &c.readyNotify && *p == notify.Abstract) || filepath.IsAbs(*p) {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return fmt.Errorf("cannot make %q absolute: %v", *p, err)
		}
		*p = abs
	}
	return nil
}

package main

import "github.com/light-fabric/lfinit/core"

// checkDaemon turns --pidfile and --wait-for into the daemon mode.
func (c *config) checkDaemon() error {
	switch {
	case c.opts.Pidfile != "" && c.waitFor == "tree":
		return usagef("--pidfile and --wait-for=tree exclude each other: follow the daemon named in the pidfile, or every process of the tree")
	case c.opts.Pidfile != "":
		c.opts.Daemon = core.DaemonPidfile
	case c.waitFor == "tree":
		c.opts.Daemon = core.DaemonTree
	}
	return nil
}

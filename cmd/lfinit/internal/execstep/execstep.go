// Package execstep runs lfinit's exec step (spawn.RunExecStep) when lfinit
// was started as one, before the binary's larger packages initialise.
//
// The step is the child of a socket-activated lfinit for the moment it
// takes to set LISTEN_PID to its own pid and exec the command; every
// package initialised before that is time the command waits. This package
// imports only spawn (whose own imports are the standard library's and
// golang.org/x/sys/unix), so Go initialises it before Prometheus and
// protobuf.
package execstep

import "github.com/light-fabric/lfinit/spawn"

func init() { spawn.RunExecStep() }

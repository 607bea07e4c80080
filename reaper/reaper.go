// Package reaper is lfinit's single owner of wait4(-1): it collects every
// exited child, makes lfinit a child subreaper when it is not PID 1, and
// finds and signals the processes of lfinit's tree.
package reaper

import (
	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/exitcode"
)

// ExitCode is the shell's reading of a wait status: the exit status, or
// 128+N for a death by signal N.
func ExitCode(ws unix.WaitStatus) int {
	switch {
	case ws.Exited():
		return ws.ExitStatus()
	case ws.Signaled():
		return exitcode.SignalBase + int(ws.Signal())
	}
	return exitcode.UnknownWait
}

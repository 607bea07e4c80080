package reaper

import (
	"errors"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/forward"
)

// SignalTree sends sig to every live process of lfinit's tree and returns
// the ones it signalled. group, when above 1, is the main child's pid, not
// yet reaped: its process group and then the child itself are signalled
// before anything else, so that this cheap, sure reach never waits for a
// scan; what it hit shows in the scan as dying or zombie, and is listed.
// As PID 1 the tree is the whole PID namespace, and kill(-1) reaches all of
// it in one call (the kernel skips the caller). Anywhere else kill(-1)
// would reach the whole machine, so the descendants are found in /proc and
// signalled one by one, each through a pidfd checked to be the process
// found.
func SignalTree(pid1 bool, sig syscall.Signal, group int) []Proc {
	self := os.Getpid()
	if group > 1 {
		forward.Deliver(group, forward.Group, sig)
		forward.Deliver(group, forward.Child, sig)
	}
	if pid1 {
		if err := unix.Kill(-1, sig); err != nil {
			return nil // ESRCH: nothing left to signal
		}
		// Listed after the kill, so the kill is not delayed by the scan;
		// the dying are listed with the live.
		var hit []Proc
		for _, p := range Table("/proc") {
			if p.Pid != self && p.State != 'X' {
				hit = append(hit, p)
			}
		}
		return hit
	}
	var hit []Proc
	for _, p := range Tree(Table("/proc"), self) {
		if p.State == 'Z' || p.State == 'X' || signalExact(p, sig) {
			hit = append(hit, p)
		}
	}
	return hit
}

// signalExact signals p only if the pid still names the process found.
func signalExact(p Proc, sig syscall.Signal) bool {
	fd, err := unix.PidfdOpen(p.Pid, 0)
	if errors.Is(err, unix.ENOSYS) {
		// A kernel older than 5.3: check the identity, then kill by pid.
		if same(p) {
			return unix.Kill(p.Pid, sig) == nil
		}
		return false
	}
	if err != nil {
		return false // gone already
	}
	defer unix.Close(fd)
	// The pidfd pins one process; if it is the one found, signal it.
	if !same(p) {
		return false
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0) == nil
}

// same reports whether p.Pid still names the process p (same start time).
func same(p Proc) bool {
	now, ok := readProc("/proc", strconv.Itoa(p.Pid))
	return ok && now.Start == p.Start
}

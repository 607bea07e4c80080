package main

import (
	"fmt"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// setParentDeathSignal asks the kernel to send sig to lfinit when its
// parent exits (PR_SET_PDEATHSIG), as tini -p does. The setting belongs to
// the calling thread, so it is made on a thread locked for lfinit's whole
// life: the Go runtime ends a thread only when a goroutine exits locked to
// it, which this one never does. The kernel sends it when the parent's
// thread that started lfinit exits, not only the whole parent process.
func setParentDeathSignal(sig syscall.Signal) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		parent := unix.Getppid()
		err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(sig), 0, 0, 0)
		if err == nil && unix.Getppid() != parent {
			// The parent exited before the setting was made: it will
			// never fire, so act as if it had.
			err = unix.Kill(unix.Getpid(), sig)
		}
		errc <- err
		select {}
	}()
	if err := <-errc; err != nil {
		return fmt.Errorf("cannot set the parent-death signal: %v", err)
	}
	return nil
}

package main

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/forward"
)

// rewriteValue collects FROM:TO signal rewrites (TO 0: drop FROM); a comma
// separates several in one value.
type rewriteValue struct {
	m map[syscall.Signal]syscall.Signal
}

func (v rewriteValue) String() string {
	var from []int
	for f := range v.m {
		from = append(from, int(f))
	}
	sort.Ints(from)
	var pairs []string
	for _, f := range from {
		pairs = append(pairs, fmt.Sprintf("%d:%d", f, v.m[syscall.Signal(f)]))
	}
	return strings.Join(pairs, ",")
}

func (v rewriteValue) Set(s string) error {
	for _, pair := range strings.Split(s, ",") {
		from, to, ok := strings.Cut(strings.TrimSpace(pair), ":")
		if !ok {
			return fmt.Errorf("%q is not FROM:TO (e.g. TERM:QUIT, 15:3, or INT:0 to drop INT)", pair)
		}
		f, err := forward.Parse(from)
		if err != nil {
			return err
		}
		if !forward.IsRelayed(f) {
			return fmt.Errorf("%s cannot be caught by lfinit, so it cannot be rewritten", forward.Name(f))
		}
		var t syscall.Signal
		if strings.TrimSpace(to) != "0" {
			if t, err = forward.Parse(to); err != nil {
				return err
			}
		}
		v.m[f] = t
	}
	return nil
}

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

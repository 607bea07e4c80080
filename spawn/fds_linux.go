package spawn

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// CloseInheritedFDs marks every descriptor from 3+keep up close-on-exec,
// so that descriptors lfinit inherited by accident (a leaky parent) do not
// reach the child; the first keep ones (--preserve-fds) do.
func CloseInheritedFDs(keep int) error {
	first := uint(3 + keep)
	if err := unix.CloseRange(first, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	// Kernels before 5.11: walk /proc/self/fd.
	for _, fd := range openFDs() {
		if fd >= int(first) {
			unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
	return nil
}

// InheritedFDs lists the descriptors from 3 up that lfinit inherited from
// its parent. They are the ones without close-on-exec: the kernel closed
// every inherited one that had it at lfinit's exec, and Go opens every
// descriptor of its own with it. Call it before CloseInheritedFDs.
func InheritedFDs() []int {
	var out []int
	for _, fd := range openFDs() {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if fd >= 3 && err == nil && flags&unix.FD_CLOEXEC == 0 {
			out = append(out, fd)
		}
	}
	return out
}

// CloseFDs closes fds: lfinit's own copies of inherited descriptors, once
// the child has the ones it keeps, so that a pipe's reader sees its end
// and a socket is not held open by lfinit (catatonit does the same).
func CloseFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// openFDs lists the open descriptors, from /proc/self/fd, or without
// /proc by asking each number up to the descriptor limit.
func openFDs() []int {
	var out []int
	if entries, err := os.ReadDir("/proc/self/fd"); err == nil {
		for _, e := range entries {
			if fd, err := strconv.Atoi(e.Name()); err == nil {
				out = append(out, fd)
			}
		}
		return out
	}
	var rl unix.Rlimit
	limit := uint64(1024)
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil {
		limit = min(rl.Cur, 1<<20)
	}
	for fd := 0; uint64(fd) < limit; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
			out = append(out, fd)
		}
	}
	return out
}

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
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= int(first) {
			unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
	return nil
}

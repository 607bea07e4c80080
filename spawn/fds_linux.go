package spawn

import (
	"encoding/binary"

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
	if out, err := procFDs(); err == nil {
		return out
	}
	var out []int
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

// procFDs lists /proc/self/fd with getdents64 into a small buffer and
// reads the numbers in place: os.ReadDir's 8 KiB buffer and its entries
// are fresh heap pages on every start, faulted in on the child's path.
// The directory's own descriptor is left out.
func procFDs() ([]int, error) {
	dir, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dir)
	var out []int
	var buf [1024]byte
	for {
		n, err := unix.Getdents(dir, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		out = appendDirentFDs(out, buf[:n], dir)
	}
}

// appendDirentFDs appends the numeric names of the linux_dirent64 records
// in b (d_ino, d_off, d_reclen, d_type, d_name), but skip, to out.
func appendDirentFDs(out []int, b []byte, skip int) []int {
	const nameOff = 19 // 8 + 8 + 2 + 1
	for len(b) >= nameOff {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < nameOff || reclen > len(b) {
			break
		}
		if fd, ok := atoiName(b[nameOff:reclen]); ok && fd != skip {
			out = append(out, fd)
		}
		b = b[reclen:]
	}
	return out
}

// atoiName reads a NUL-terminated decimal name; "." and ".." are not one.
func atoiName(name []byte) (int, bool) {
	n, digits := 0, 0
	for _, c := range name {
		if c == 0 {
			break
		}
		if c < '0' || c > '9' || n > 1<<30 {
			return 0, false
		}
		n = n*10 + int(c-'0')
		digits++
	}
	return n, digits > 0
}

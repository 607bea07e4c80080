package spawn

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Terminal is lfinit's controlling terminal, on stdin.
type Terminal struct {
	fd  int
	own int // lfinit's process group as this namespace sees it (0: not visible)
}

// ControllingTerminal is stdin's terminal when it is lfinit's controlling
// terminal (an interactive run: `docker run -it`, a shell's job), or nil.
// TIOCGPGRP fails with ENOTTY for anything else: a pipe, /dev/null, or a
// terminal that belongs to another session.
func ControllingTerminal() *Terminal {
	if _, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err != nil {
		return nil
	}
	return &Terminal{fd: 0, own: unix.Getpgrp()}
}

// InForeground reports whether lfinit's own process group holds the
// terminal's foreground: only then may the child be given it (a
// background lfinit must not steal the terminal from its shell). As PID 1
// of a PID namespace whose session leader is outside it, both ids read 0.
func (t *Terminal) InForeground() bool {
	pgrp, err := unix.IoctlGetInt(t.fd, unix.TIOCGPGRP)
	return err == nil && pgrp == t.own
}

// Holds reports whether process group pgrp holds the terminal's foreground.
func (t *Terminal) Holds(pgrp int) bool {
	fg, err := unix.IoctlGetInt(t.fd, unix.TIOCGPGRP)
	return err == nil && fg == pgrp
}

// Give makes pgrp the terminal's foreground group. A background process
// asking for that is sent SIGTTOU (and, since lfinit catches it, asked
// again forever) unless SIGTTOU is blocked, so it is blocked on this
// thread for the call.
func (t *Terminal) Give(pgrp int) error {
	if pgrp <= 0 {
		return unix.EINVAL
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var block, old unix.Sigset_t
	const bits = uint(unsafe.Sizeof(block.Val[0]) * 8)
	n := uint(unix.SIGTTOU) - 1
	block.Val[n/bits] |= 1 << (n % bits)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &block, &old); err != nil {
		return err
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	return unix.IoctlSetPointerInt(t.fd, unix.TIOCSPGRP, pgrp)
}

// Reclaim gives the foreground back to lfinit's own group, if this
// namespace can name it.
func (t *Terminal) Reclaim() error {
	return t.Give(t.own)
}

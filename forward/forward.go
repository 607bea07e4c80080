package forward

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// ReexecVariable is set by lfinit for the lfinit it execs again to clear
// its signal mask (EnsureEmptyMask); it guards against an exec loop and
// never reaches the child.
const ReexecVariable = "LFINIT_INTERNAL_MASK_REEXEC"

// Target says who receives forwarded signals.
type Target int

// The targets of --forward-to.
const (
	Child Target = iota // the main child only
	Group               // the main child's whole process group
)

// ParseTarget reads a --forward-to value.
func ParseTarget(s string) (Target, error) {
	switch s {
	case "child":
		return Child, nil
	case "group":
		return Group, nil
	}
	return 0, fmt.Errorf("unknown target %q (use child or group)", s)
}

// String is the --forward-to spelling of t.
func (t Target) String() string {
	if t == Group {
		return "group"
	}
	return "child"
}

// ErrUnsafePid is returned instead of a kill whose pid would reach beyond
// lfinit's own tree: 0 (our own group), 1 and -1 (everyone), negatives.
var ErrUnsafePid = errors.New("refusing to signal pid <= 1")

// Deliver sends sig to the child pid, or to its process group (whose id is
// the child's pid: lfinit starts it with Setpgid). The caller guarantees the
// child is not reaped yet, so neither id can have been reused. A process that
// is already gone is not an error.
func Deliver(pid int, t Target, sig syscall.Signal) error {
	if pid <= 1 {
		return ErrUnsafePid
	}
	target := pid
	if t == Group {
		target = -pid
	}
	// A bare Errno, compared directly: errors.Is would add its reflection
	// to every forward.
	if err := unix.Kill(target, sig); err != nil && err != unix.ESRCH {
		return err
	}
	return nil
}

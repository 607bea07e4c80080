package spawn

import (
	"fmt"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/exitcode"
	"github.com/light-fabric/lfinit/ident"
)

// Credential is how the child becomes id: nil when it already is lfinit's
// own identity (nothing to change, and a non-root lfinit could not call
// setgroups), an error when lfinit lacks the privilege to change it.
func Credential(id ident.Identity) (*syscall.Credential, error) {
	uid, gid := os.Getuid(), os.Getgid()
	if canSetIDs() {
		return &syscall.Credential{Uid: id.UID, Gid: id.GID, Groups: id.Groups}, nil
	}
	if int(id.UID) == uid && int(id.GID) == gid && os.Geteuid() == uid && os.Getegid() == gid {
		return nil, nil
	}
	return nil, fmt.Errorf("--user %s: lfinit runs as uid %d gid %d without CAP_SETUID and CAP_SETGID, so it cannot start the child as uid %d gid %d (start lfinit as root, or leave --user out)",
		describe(id), uid, gid, id.UID, id.GID)
}

func describe(id ident.Identity) string {
	if id.Name != "" {
		return id.Name
	}
	return fmt.Sprint(id.UID)
}

// canSetIDs reports whether lfinit may set any uid, gid and groups: both
// capabilities effective (root in its user namespace, normally).
func canSetIDs() bool {
	c, err := capabilities()
	return err == nil && has(c[0].Effective, unix.CAP_SETUID) && has(c[0].Effective, unix.CAP_SETGID)
}

func has(set uint32, bit int) bool { return set&(1<<uint(bit)) != 0 }

// capabilities are the calling thread's capability sets (two words each).
func capabilities() ([2]unix.CapUserData, error) {
	var data [2]unix.CapUserData
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	err := unix.Capget(&hdr, &data[0])
	return data, err
}

// needsClearedInheritable reports whether a child that becomes a non-root
// user must be forked from a thread with no inheritable capabilities: the
// kernel clears the permitted, effective and ambient sets on the setuid
// from root, but not the inheritable one, which a later exec of a file
// with inheritable file capabilities would turn into permitted ones.
func needsClearedInheritable(c *syscall.Credential) bool {
	if c == nil || c.Uid == 0 {
		return false
	}
	caps, err := capabilities()
	return err != nil || caps[0].Inheritable != 0 || caps[1].Inheritable != 0
}

// withoutInheritable runs start on a thread of its own whose inheritable
// (and so ambient) capabilities are cleared, so that the child forked
// there inherits none. The thread is never unlocked: the Go runtime ends
// it with the goroutine, and its lowered sets with it, so lfinit's other
// threads keep theirs.
func withoutInheritable(start func() (int, error)) (int, error) {
	type result struct {
		pid int
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		caps, err := capabilities()
		if err == nil {
			caps[0].Inheritable, caps[1].Inheritable = 0, 0
			hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
			err = unix.Capset(&hdr, &caps[0])
		}
		if err != nil {
			done <- result{0, &Error{exitcode.NotExec, fmt.Sprintf("cannot clear the inheritable capabilities the child would keep: %v", err)}}
			return
		}
		pid, err := start()
		done <- result{pid, err}
	}()
	r := <-done
	return r.pid, r.err
}

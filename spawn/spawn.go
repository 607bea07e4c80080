// Package spawn starts lfinit's child: the PATH lookup a shell does, the
// fork/exec into a process group of its own (made the terminal's
// foreground group when lfinit holds the terminal), /bin/sh for a script
// without a #! line, and the exit code a failure earns (126 or 127).
package spawn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/exitcode"
)

// Error says why the child could not be started and which exit code that
// earns (exitcode.NotFound or exitcode.NotExec).
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Options are how the child is started.
type Options struct {
	Env         []string // the child's environment
	PreserveFDs int      // inherited descriptors from 3 up passed on
	// Foreground makes the child's process group the foreground group of
	// the terminal on stdin before it execs (see ForegroundTerminal).
	Foreground bool
	// ListenPID starts the child through lfinit's exec step, which sets
	// its LISTEN_PID and WATCHDOG_PID to its own pid (socket activation,
	// see ListenFDs; the service watchdog).
	ListenPID bool
	// Credential, when set, is the uid, gid and groups the child execs
	// with (--user); lfinit keeps its own.
	Credential *syscall.Credential
}

// shell runs a file the kernel refuses with ENOEXEC (no #! line), as
// execvp does.
var shell = "/bin/sh"

// Start starts argv as lfinit's child, in a process group of its own, with
// lfinit's own descriptors 0, 1 and 2 (never pipes: lfinit is not in the log
// path). It does not wait for it: only the reaper waits.
//
// The Go runtime resets every signal lfinit handles to its default in the
// child, and restores the signal mask lfinit started with (see
// forward.EnsureEmptyMask), so the child starts clean.
func Start(argv []string, o Options) (int, error) {
	path, err := lookPath(argv[0], o.Env)
	if err != nil {
		return 0, err
	}
	attr := &syscall.ProcAttr{
		Env:   o.Env,
		Files: files(o.PreserveFDs),
		// With Foreground, the child does the TIOCSPGRP itself after its
		// setpgid, with every signal blocked, so it cannot be stopped by
		// SIGTTOU or read the terminal before it owns it; Ctty is stdin.
		// Credential is applied after the TIOCSPGRP, which still runs
		// with lfinit's identity.
		Sys: &syscall.SysProcAttr{Setpgid: true, Foreground: o.Foreground, Ctty: 0, Credential: o.Credential},
	}
	start := func() (int, error) { return forkExec(path, argv, attr, o.ListenPID) }
	if needsClearedInheritable(o.Credential) {
		return withoutInheritable(start)
	}
	return start()
}

// forkExec starts path directly, or through the exec step for LISTEN_PID.
func forkExec(path string, argv []string, attr *syscall.ProcAttr, listenPID bool) (int, error) {
	if listenPID {
		return startThroughStep(path, argv, attr)
	}
	pid, err := syscall.ForkExec(path, argv, attr)
	if errors.Is(err, syscall.ENOEXEC) && exists(shell) {
		// A script without #!: the shell reads it, as execvp does.
		pid, err = syscall.ForkExec(shell, append([]string{shell, path}, argv[1:]...), attr)
	}
	if err != nil {
		return 0, execError(argv[0], path, err)
	}
	return pid, nil
}

// files is the child's descriptor table: 0, 1, 2 and the preserved ones.
func files(preserveFDs int) []uintptr {
	var files []uintptr
	for fd := 0; fd < 3+preserveFDs; fd++ {
		// A descriptor lfinit was started without stays closed in the
		// child, rather than failing the exec with EBADF.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			files = append(files, ^uintptr(0))
			continue
		}
		files = append(files, uintptr(fd))
	}
	return files
}

func execError(name, path string, err error) *Error {
	switch {
	case errors.Is(err, syscall.ENOENT) && exists(path):
		return &Error{exitcode.NotExec, fmt.Sprintf("cannot run %q: its interpreter (#! line) or loader was not found", name)}
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR):
		return &Error{exitcode.NotFound, fmt.Sprintf("cannot run %q: no such file", name)}
	case errors.Is(err, syscall.EACCES) && isDir(path):
		return &Error{exitcode.NotExec, fmt.Sprintf("cannot run %q: it is a directory", name)}
	case errors.Is(err, syscall.EACCES):
		return &Error{exitcode.NotExec, fmt.Sprintf("cannot run %q: permission denied (is it executable? chmod +x)", name)}
	case errors.Is(err, syscall.ENOEXEC):
		return &Error{exitcode.NotExec, fmt.Sprintf("cannot run %q: not an executable format, and there is no "+shell+" to run it as a script (add a #! line naming its interpreter)", name)}
	}
	return &Error{exitcode.NotExec, fmt.Sprintf("cannot run %q: %v", name, err)}
}

// lookPath finds name like a shell does: a name with a slash is used as it
// is; otherwise the first executable file of that name in PATH wins, and a
// non-executable one found on the way makes "permission denied" (126)
// rather than "not found" (127).
func lookPath(name string, env []string) (string, error) {
	if name == "" {
		return "", &Error{exitcode.NotFound, "cannot run an empty command name"}
	}
	if strings.Contains(name, "/") {
		return name, nil
	}
	pathVar, ok := lookup(env, "PATH")
	if !ok {
		pathVar = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	denied := ""
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() {
			continue
		}
		if fi.Mode()&0o111 != 0 {
			return p, nil
		}
		if denied == "" {
			denied = p
		}
	}
	if denied != "" {
		return "", &Error{exitcode.NotExec, fmt.Sprintf("cannot run %q: %s is not executable (chmod +x)", name, denied)}
	}
	return "", &Error{exitcode.NotFound, fmt.Sprintf("cannot run %q: not found in PATH (%s)", name, pathVar)}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

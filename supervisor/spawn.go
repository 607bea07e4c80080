package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// StartError says why the child could not be started and which exit code
// that earns (127 not found, 126 not executable).
type StartError struct {
	Code int
	Msg  string
}

func (e *StartError) Error() string { return e.Msg }

// Spawn starts argv as lfinit's child, in a process group of its own, with
// lfinit's own descriptors 0, 1 and 2 (never pipes: lfinit is not in the log
// path) and env. It does not wait for it: only the reaper waits.
//
// The Go runtime resets every signal lfinit handles to its default in the
// child, and restores the signal mask lfinit started with (see
// forward.EnsureEmptyMask), so the child starts clean.
func Spawn(argv, env []string, preserveFDs int) (int, error) {
	path, err := lookPath(argv[0], env)
	if err != nil {
		return 0, err
	}
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
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   env,
		Files: files,
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		return 0, execError(argv[0], path, err)
	}
	return pid, nil
}

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

func execError(name, path string, err error) *StartError {
	switch {
	case errors.Is(err, syscall.ENOENT) && exists(path):
		return &StartError{ExitNotExec, fmt.Sprintf("cannot run %q: its interpreter (#! line) or loader was not found", name)}
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR):
		return &StartError{ExitNotFound, fmt.Sprintf("cannot run %q: no such file", name)}
	case errors.Is(err, syscall.EACCES) && isDir(path):
		return &StartError{ExitNotExec, fmt.Sprintf("cannot run %q: it is a directory", name)}
	case errors.Is(err, syscall.EACCES):
		return &StartError{ExitNotExec, fmt.Sprintf("cannot run %q: permission denied (is it executable? chmod +x)", name)}
	case errors.Is(err, syscall.ENOEXEC):
		return &StartError{ExitNotExec, fmt.Sprintf("cannot run %q: not an executable format (a script needs a #! line)", name)}
	}
	return &StartError{ExitNotExec, fmt.Sprintf("cannot run %q: %v", name, err)}
}

// lookPath finds name like a shell does: a name with a slash is used as it
// is; otherwise the first executable file of that name in PATH wins, and a
// non-executable one found on the way makes "permission denied" (126)
// rather than "not found" (127).
func lookPath(name string, env []string) (string, error) {
	if name == "" {
		return "", &StartError{ExitNotFound, "cannot run an empty command name"}
	}
	if strings.Contains(name, "/") {
		return name, nil
	}
	pathVar := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
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
		return "", &StartError{ExitNotExec, fmt.Sprintf("cannot run %q: %s is not executable (chmod +x)", name, denied)}
	}
	return "", &StartError{ExitNotFound, fmt.Sprintf("cannot run %q: not found in PATH (%s)", name, pathVar)}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

package spawn

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/exitcode"
)

// ListenFDs reads socket activation's variables in env as sd_listen_fds(3)
// does for a process whose pid is self: ok when LISTEN_PID names self and
// LISTEN_FDS is a count n (the sockets are descriptors 3 to 3+n-1).
func ListenFDs(env []string, self int) (n int, ok bool) {
	v, _ := lookup(env, "LISTEN_PID")
	pid, err1 := strconv.Atoi(v)
	v, _ = lookup(env, "LISTEN_FDS")
	n, err2 := strconv.Atoi(v)
	if err1 != nil || err2 != nil || pid != self || n < 0 || n > 1<<16 {
		return 0, false
	}
	return n, true
}

// lookup is key's value in env (the last one, as getenv has it).
func lookup(env []string, key string) (v string, found bool) {
	for _, kv := range env {
		if s, ok := strings.CutPrefix(kv, key+"="); ok {
			v, found = s, true
		}
	}
	return v, found
}

// stepArg0 is argv[0] of lfinit started as its own exec step (no user
// names lfinit so): argv then holds the status descriptor, the command's
// name, its path and its arguments.
const stepArg0 = "lfinit-exec-step"

// stepExe is the exec step's program: lfinit's own binary.
var stepExe = "/proc/self/exe"

// CanSetListenPID reports whether the exec step can run here (it needs
// /proc for lfinit's own binary).
func CanSetListenPID() bool { return exists(stepExe) }

// startThroughStep starts lfinit itself as the exec step, which sets
// LISTEN_PID to its own pid and execs path: Go's fork/exec fixes the
// environment before the child's pid is known. A close-on-exec pipe says
// how the step's exec went: EOF when it succeeded, else the error, as
// ForkExec's own pipe does; until then signals for the child wait in
// lfinit's queue, so none reaches the step instead of the command.
func startThroughStep(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, &Error{exitcode.NotExec, fmt.Sprintf("cannot run %q: %v", argv[0], err)}
	}
	defer r.Close()
	step := *attr
	step.Files = append(append([]uintptr{}, attr.Files...), w.Fd())
	args := append([]string{stepArg0, strconv.Itoa(len(attr.Files)), argv[0], path}, argv[1:]...)
	pid, err := syscall.ForkExec(stepExe, args, &step)
	w.Close()
	if err != nil {
		return 0, &Error{exitcode.NotExec, fmt.Sprintf("cannot run %q through lfinit's exec step (%s): %v", argv[0], stepExe, err)}
	}
	msg, _ := io.ReadAll(r)
	if len(msg) == 0 {
		return pid, nil
	}
	// The step exits at once: reap it here, as ForkExec reaps a child
	// whose exec failed, before the reaper runs.
	var ws unix.WaitStatus
	unix.Wait4(pid, &ws, 0, nil)
	return 0, decodeStepError(string(msg))
}

// decodeStepError reads the step's "CODE MESSAGE".
func decodeStepError(msg string) *Error {
	code, text, _ := strings.Cut(msg, " ")
	n, err := strconv.Atoi(code)
	if err != nil {
		return &Error{exitcode.NotExec, "lfinit's exec step failed: " + msg}
	}
	return &Error{n, text}
}

// RunExecStep is lfinit's exec step when os.Args say that lfinit was
// started as one, and returns otherwise. Call it before anything else.
func RunExecStep() {
	if len(os.Args) < 4 || os.Args[0] != stepArg0 {
		return
	}
	os.Exit(execStep(os.Args[1:]))
}

// execStep sets LISTEN_PID to this process's pid and execs the command
// (with /bin/sh for a file without #!, as Start does); it returns only
// when that failed, having written why to the status descriptor.
func execStep(args []string) int {
	fd, err := strconv.Atoi(args[0])
	if err != nil {
		return exitcode.NotExec
	}
	// Not the command's: it must close when the command starts.
	unix.CloseOnExec(fd)
	name, path := args[1], args[2]
	argv := append([]string{name}, args[3:]...)
	env := withListenPID(os.Environ(), os.Getpid())
	err = syscall.Exec(path, argv, env)
	if errors.Is(err, syscall.ENOEXEC) && exists(shell) {
		err = syscall.Exec(shell, append([]string{shell, path}, argv[1:]...), env)
	}
	e := execError(name, path, err)
	unix.Write(fd, []byte(strconv.Itoa(e.Code)+" "+e.Msg))
	return e.Code
}

// withListenPID is env with LISTEN_PID's value replaced by pid, in place:
// nothing else of the environment changes.
func withListenPID(env []string, pid int) []string {
	out := append([]string{}, env...)
	for i, kv := range out {
		if strings.HasPrefix(kv, "LISTEN_PID=") {
			out[i] = "LISTEN_PID=" + strconv.Itoa(pid)
		}
	}
	return out
}

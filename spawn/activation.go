package spawn

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/exitcode"
	"github.com/light-fabric/lfinit/spawn/step"
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

// stepExe is the exec step's program: lfinit's own binary.
var stepExe = "/proc/self/exe"

// CanSetListenPID reports whether the exec step can run here (it needs
// /proc for lfinit's own binary).
func CanSetListenPID() bool { return exists(stepExe) }

// startThroughStep starts lfinit itself as the exec step (package step),
// which sets LISTEN_PID to its own pid and execs path. A close-on-exec
// pipe says how the step's exec went: EOF when it succeeded, else the
// errno, as ForkExec's own pipe does; until then signals for the child
// wait in lfinit's queue, so none reaches the step instead of the command.
func startThroughStep(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, execError(argv[0], path, err)
	}
	defer r.Close()
	st := *attr
	st.Files = append(append([]uintptr{}, attr.Files...), w.Fd())
	sh := ""
	if exists(shell) {
		sh = shell
	}
	args := append([]string{step.Arg0, strconv.Itoa(len(attr.Files)), sh, path}, argv...)
	pid, err := syscall.ForkExec(stepExe, args, &st)
	w.Close()
	if err != nil {
		hint := ""
		if attr.Sys.Credential != nil && err == syscall.EACCES {
			// The step runs as the --user already: lfinit's binary must
			// be executable by that user.
			hint = " (with --user, lfinit's binary must be executable by that user: chmod 755)"
		}
		return 0, &Error{exitcode.NotExec, fmt.Sprintf("cannot run %q through lfinit's exec step (%s): %v%s", argv[0], stepExe, err, hint)}
	}
	msg, _ := io.ReadAll(r)
	if len(msg) == 0 {
		return pid, nil
	}
	// The step exits at once: reap it here, as ForkExec reaps a child
	// whose exec failed, before the reaper runs.
	var ws unix.WaitStatus
	unix.Wait4(pid, &ws, 0, nil)
	errno, _ := strconv.Atoi(string(msg))
	return 0, execError(argv[0], path, syscall.Errno(errno))
}

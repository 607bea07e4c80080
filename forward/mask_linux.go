package forward

import (
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// EnsureEmptyMask makes sure lfinit runs with an empty signal mask, so that
// its child starts with one. The Go runtime gives a forked child the mask
// the process started with, whatever the thread's mask is now; if lfinit's
// parent left signals blocked, the only cure is to clear the mask and exec
// lfinit again (same pid, so PID 1 stays PID 1). It returns the environment
// to give the child, without the loop guard, and an error only when the
// mask is blocked and could not be cleared.
func EnsureEmptyMask(args, env []string) ([]string, error) {
	env = without(env, ReexecVariable)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cur unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, nil, &cur); err != nil {
		return env, err
	}
	if cur == (unix.Sigset_t{}) || os.Getenv(ReexecVariable) != "" {
		return env, nil
	}
	var empty unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &empty, nil); err != nil {
		return env, err
	}
	exe, err := os.Executable()
	if err != nil {
		return env, err
	}
	err = unix.Exec(exe, args, append(env, ReexecVariable+"=1"))
	unix.PthreadSigmask(unix.SIG_SETMASK, &cur, nil)
	return env, err
}

func without(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/internal/measure"
)

// The early-stop run: SIGTERM at a uniformly random instant in the first
// earlySpan after the PID 1 appears, counted in bins of earlyBin.
const (
	earlySpan = 16 * time.Millisecond
	earlyBin  = 2 * time.Millisecond
	// earlyPoll is how often unshare's children are read until its child,
	// the namespace's PID 1, appears.
	earlyPoll = 20 * time.Microsecond
)

// earlyOutcome is what one early SIGTERM led to.
type earlyOutcome int

// The outcomes of an early SIGTERM.
const (
	earlyOK    earlyOutcome = iota // PID 1 exited 143: the child died of the forwarded TERM
	earlyLost                      // PID 1 still ran lostAfter later: the kernel dropped the TERM
	earlyExit2                     // PID 1 exited 2: the Go runtime's handler, before signal.Notify
	earlyOther                     // any other exit code
)

// earlyTrial is one SIGTERM sent at an instant after the PID 1 appeared.
type earlyTrial struct {
	at      time.Duration // from the PID 1 seen to the kill
	outcome earlyOutcome
	code    int // PID 1's exit code, as unshare passes it on
}

// earlyResult is every trial of every init, and how it was run.
type earlyResult struct {
	trials    map[string][]earlyTrial
	lostAfter time.Duration
}

// benchEarly runs rounds rounds; each draws one instant in [0, earlySpan)
// and runs every init once with it, in a new random order, as PID 1 of a
// fresh namespace with pause as its child.
func benchEarly(rng *rand.Rand, inits []initSpec, rounds int, pause string, lostAfter time.Duration) (earlyResult, error) {
	res := earlyResult{trials: map[string][]earlyTrial{}, lostAfter: lostAfter}
	unshare, err := exec.LookPath(nsPrefix[0])
	if err != nil {
		return res, err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return res, err
	}
	defer null.Close()
	fd := null.Fd()
	attr := &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{fd, fd, fd}}
	// The kill is timed on this thread: without the default 50 µs of timer
	// slack its sleep ends when asked.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0); err != nil {
		return res, err
	}
	cs := withFloor(inits)[1:]
	for range rounds {
		at := time.Duration(rng.Int64N(int64(earlySpan)))
		for _, c := range shuffled(rng, cs) {
			argv := append(append(append([]string{unshare}, nsPrefix[1:]...), c.prefix...), pause)
			tr, err := earlyRun(argv, attr, at, lostAfter)
			if err != nil {
				return res, fmt.Errorf("%s: %w", c.name, err)
			}
			res.trials[c.name] = append(res.trials[c.name], tr)
		}
	}
	return res, nil
}

// earlyRun starts argv (unshare and the init), sends SIGTERM to the PID 1
// at after it is seen, and classifies what follows.
func earlyRun(argv []string, attr *syscall.ProcAttr, at, lostAfter time.Duration) (earlyTrial, error) {
	pid, err := syscall.ForkExec(argv[0], argv, attr)
	if err != nil {
		return earlyTrial{}, err
	}
	pid1, seen, err := watchFork(pid, 5*time.Second)
	var pidfd int
	if err == nil {
		pidfd, err = unix.PidfdOpen(pid1, 0)
	}
	if err != nil {
		syscall.Kill(pid, syscall.SIGKILL)
		waitCode(pid)
		return earlyTrial{}, err
	}
	defer unix.Close(pidfd)
	sleepUntil(seen + int64(at))
	before := mono()
	err = unix.PidfdSendSignal(pidfd, syscall.SIGTERM, nil, 0)
	sent := (before + mono()) / 2
	if err != nil {
		// ESRCH: the PID 1 is gone before any signal (an exec failure).
		syscall.Kill(pid, syscall.SIGKILL)
		return earlyTrial{}, fmt.Errorf("SIGTERM %v after the PID 1 appeared: %w (unshare exited %d)", at, err, waitCode(pid))
	}
	tr := earlyTrial{at: time.Duration(sent - seen)}
	if measure.WaitPidfd(pidfd, lostAfter) != nil {
		unix.PidfdSendSignal(pidfd, syscall.SIGKILL, nil, 0)
		waitCode(pid)
		tr.outcome = earlyLost
		return tr, nil
	}
	tr.code = waitCode(pid)
	switch tr.code {
	case 128 + int(syscall.SIGTERM):
		tr.outcome = earlyOK
	case 2:
		tr.outcome = earlyExit2
	default:
		tr.outcome = earlyOther
	}
	return tr, nil
}

// watchFork polls pid's children until the first appears: that child is
// the namespace's PID 1 (unshare forks it, then it mounts /proc and execs
// the init). It returns its host pid and when it was seen.
func watchFork(pid int, timeout time.Duration) (int, int64, error) {
	path := fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)
	buf := make([]byte, 64)
	for deadline := mono() + int64(timeout); mono() < deadline; sleep(earlyPoll) {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, 0, err
		}
		n, _ := unix.Read(fd, buf)
		unix.Close(fd)
		if f := strings.Fields(string(buf[:max(n, 0)])); len(f) > 0 {
			seen := mono()
			child, err := strconv.Atoi(f[0])
			return child, seen, err
		}
	}
	return 0, 0, fmt.Errorf("no child of pid %d appeared in %v", pid, timeout)
}

// sleepUntil sleeps until CLOCK_MONOTONIC reaches t (nanoseconds).
func sleepUntil(t int64) {
	ts := unix.NsecToTimespec(t)
	for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil) == unix.EINTR {
	}
}

// waitCode waits for pid and returns its exit code (128+N if killed by N).
func waitCode(pid int) int {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			break
		}
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

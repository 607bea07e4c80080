package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/internal/measure"
)

// nsPrefix runs a command as PID 1 of a fresh PID namespace, with its own /proc.
var nsPrefix = []string{"unshare", "--pid", "--fork", "--mount-proc"}

// instance is one init (or, for a floor, the bare child) running as PID 1
// of a fresh PID namespace under unshare.
type instance struct {
	cmd    *exec.Cmd
	pid    int // host pid of the namespace's PID 1
	pidfd  int // pins that process: signals never hit a recycled pid
	outR   *os.File
	out    *bufio.Reader // the child's stdout
	stderr chan string   // lines of PID 1's stderr, when asked for
}

// startOpts are the optional parts of start.
type startOpts struct {
	stderrLines bool // deliver PID 1's stderr lines on instance.stderr
}

// stderrFile, when set (-stderr-file), is the regular file PID 1's stderr
// is appended to when its lines are not read; otherwise it is /dev/null.
// A log on a file is the setup of most runs, and an init's last line costs
// more there than on /dev/null.
var stderrFile string

// stderrOf is where PID 1's stderr goes: a pipe, whose read end r is
// returned, when its lines are asked for; else stderrFile when set; else
// nowhere (w nil: /dev/null).
func stderrOf(o startOpts) (w, r *os.File, err error) {
	switch {
	case o.stderrLines:
		r, w, err = os.Pipe()
		return w, r, err
	case stderrFile != "":
		w, err = os.OpenFile(stderrFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		return w, nil, err
	}
	return nil, nil, nil
}

// start runs prefix+child as PID 1 of a new PID namespace and returns once
// that PID 1 is found (it may still be starting its child).
func start(prefix, child []string, o startOpts) (*instance, error) {
	argv := append(append(append([]string{}, nsPrefix...), prefix...), child...)
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = w
	in := &instance{cmd: cmd, outR: r, out: bufio.NewReader(r), pidfd: -1}
	errW, errR, err := stderrOf(o)
	if err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	if errW != nil {
		cmd.Stderr = errW
		defer errW.Close()
	}
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		if errR != nil {
			errR.Close()
		}
		return nil, err
	}
	if errR != nil {
		in.stderr = make(chan string, 64)
		go func() {
			defer errR.Close()
			sc := bufio.NewScanner(errR)
			for sc.Scan() {
				select {
				case in.stderr <- sc.Text():
				default: // nobody is listening; drop
				}
			}
		}()
	}
	pid, err := firstChild(cmd.Process.Pid, 5*time.Second)
	if err == nil {
		in.pid = pid
		in.pidfd, err = unix.PidfdOpen(pid, 0)
	}
	if err != nil {
		in.stop()
		return nil, fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return in, nil
}

// firstChild waits for ppid's first child to appear and returns its pid.
func firstChild(ppid int, timeout time.Duration) (int, error) {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); sleep(200 * time.Microsecond) {
		if kids := children(ppid); len(kids) > 0 {
			return kids[0], nil
		}
	}
	return 0, fmt.Errorf("no child of pid %d appeared in %v", ppid, timeout)
}

// children lists the children of pid; they are listed under the thread
// that forked them, so every thread is read.
func children(pid int) []int {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// line reads the child's next stdout line, waiting at most timeout.
func (in *instance) line(timeout time.Duration) (string, error) {
	in.outR.SetReadDeadline(time.Now().Add(timeout))
	s, err := in.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading the child's output: %w (got %q)", err, s)
	}
	return strings.TrimSpace(s), nil
}

// expect reads lines until one starts with prefix.
func (in *instance) expect(prefix string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		s, err := in.line(time.Until(deadline))
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(s, prefix) {
			return s, nil
		}
	}
	return "", fmt.Errorf("no %q line within %v", prefix, timeout)
}

// signal sends sig to PID 1 through its pidfd.
func (in *instance) signal(sig syscall.Signal) error {
	return unix.PidfdSendSignal(in.pidfd, sig, nil, 0)
}

// waitExit blocks until PID 1 has exited (its pidfd turns readable).
func (in *instance) waitExit(timeout time.Duration) error {
	return measure.WaitPidfd(in.pidfd, timeout)
}

// stop kills the namespace (SIGKILL to its PID 1 ends every process in it)
// and reaps unshare; it is bounded and safe to call twice.
func (in *instance) stop() {
	if in.cmd.ProcessState == nil {
		if in.pidfd >= 0 {
			unix.PidfdSendSignal(in.pidfd, syscall.SIGKILL, nil, 0)
		}
		done := make(chan struct{})
		go func() { in.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			in.cmd.Process.Kill()
			<-done
		}
	}
	if in.pidfd >= 0 {
		unix.Close(in.pidfd)
		in.pidfd = -1
	}
	in.outR.Close()
}

// finish waits for unshare after PID 1 exited by itself.
func (in *instance) finish() error {
	if err := in.waitExit(10 * time.Second); err != nil {
		in.stop()
		return err
	}
	in.stop()
	return nil
}

// mono is CLOCK_MONOTONIC in nanoseconds, the clock the C children use.
func mono() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// sleep sleeps in the kernel, without the Go timer's millisecond rounding.
func sleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// cpuNanos is the CPU time all of pid's threads have used, from schedstat
// (nanoseconds, unlike the clock ticks of /proc/PID/stat).
func cpuNanos(pid int) int64 {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum int64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if fs := strings.Fields(string(b)); len(fs) > 0 {
			n, _ := strconv.ParseInt(fs[0], 10, 64)
			sum += n
		}
	}
	return sum
}

// ctxSwitches is the sum of voluntary and involuntary context switches of
// every thread of pid: each is a time a thread went to sleep or was woken.
func ctxSwitches(pid int) int64 {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	var sum int64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				sum += n
			}
		}
	}
	return sum
}

// statusKiB reads a "Key: N kB" field of /proc/PID/status.
func statusKiB(pid int, key string) int64 { return procKiB(pid, "status", key) }

// procKiB reads a "Key: N kB" field of /proc/PID/FILE (status, smaps_rollup).
func procKiB(pid int, file, key string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return -1
}

// threads is how many threads pid has.
func threads(pid int) int {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	return len(files)
}

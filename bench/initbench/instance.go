package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
)

// nsPrefix runs a command as PID 1 of a fresh PID namespace, with its own /proc.
var nsPrefix = []string{"unshare", "--pid", "--fork", "--mount-proc"}

// instance is one init (or, for a floor, the bare child) running as PID 1
// of a fresh PID namespace under unshare.
type instance struct {
	cmd     *exec.Cmd
	pid     int // host pid of the namespace's PID 1
	pidfd   int // pins that process: signals never hit a recycled pid
	outR    *os.File
	out     *bufio.Reader // the child's stdout
	stderr  chan string   // lines of PID 1's stderr, when asked for
	ends    []*os.File    // the benchmark's ends of PID 1's stderr, closed by stop
	drained chan struct{} // closed once the drain of PID 1's stderr has returned
}

// startOpts are the optional parts of start.
type startOpts struct {
	stderrLines bool // deliver PID 1's stderr lines on instance.stderr
}

// stderrMode (-stderr) is where PID 1's stderr goes when its lines are not
// read: null, file, pipe or tty (one of stderrModes). An init's last log
// line costs a different amount on each, so the shutdown run can be
// measured wherever users put stderr.
var stderrMode = "null"

// stderrModes are the values of -stderr and how the report names each.
var stderrModes = map[string]string{
	"null": "/dev/null.",
	"file": "a regular file in the run's temp dir.",
	"pipe": "a pipe drained by the benchmark.",
	"tty":  "a pseudo-terminal's slave (no one's controlling terminal), its master drained by the benchmark.",
}

// stderrFile is the regular file PID 1's stderr is appended to under
// -stderr file. A log on a file is the setup of most runs, and an init's
// last line costs more there than on /dev/null.
var stderrFile string

// stderrSink is where one PID 1 writes its stderr, and the benchmark's
// ends of it.
type stderrSink struct {
	w     *os.File // PID 1's stderr; nil: /dev/null
	keepW bool     // w stays open here until the instance ends (a pty's slave)
	lines *os.File // a pipe's read end, whose lines go to instance.stderr
	drain *os.File // a pipe's read end or a pty's master, read and discarded
}

// stderrOf is where PID 1's stderr goes: a pipe of its own when its lines
// are asked for, whatever -stderr says; else the -stderr destination.
func stderrOf(o startOpts) (s stderrSink, err error) {
	switch {
	case o.stderrLines:
		s.lines, s.w, err = os.Pipe()
	case stderrMode == "file":
		s.w, err = os.OpenFile(stderrFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	case stderrMode == "pipe":
		s.drain, s.w, err = os.Pipe()
	case stderrMode == "tty":
		s.drain, s.w, err = openPty()
		s.keepW = true
	}
	return s, err
}

// close closes every end of s the benchmark holds, for a start that failed.
func (s stderrSink) close() {
	for _, f := range []*os.File{s.w, s.lines, s.drain} {
		if f != nil {
			f.Close()
		}
	}
}

// openPty opens a new pseudo-terminal: its master and its slave, both with
// O_NOCTTY so that it becomes no one's controlling terminal.
func openPty() (master, slave *os.File, err error) {
	// Non-blocking, the master is read through the poller, so that closing
	// it ends a drain blocked in a read.
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	n := 0
	if err = unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err == nil {
		n, err = unix.IoctlGetInt(fd, unix.TIOCGPTN)
	}
	if err == nil {
		// exec turns it back to blocking (File.Fd) before PID 1 inherits it.
		slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	}
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("pseudo-terminal: %w", err)
	}
	return master, slave, nil
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
	s, err := stderrOf(o)
	if err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	if s.w != nil {
		cmd.Stderr = s.w
	}
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		s.close()
		return nil, err
	}
	in.takeStderr(s)
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

// takeStderr keeps the benchmark's ends of a started PID 1's stderr: it
// closes the write end unless it is held (a pty's slave), delivers the
// lines or drains, and leaves what stop must close in ends.
func (in *instance) takeStderr(s stderrSink) {
	if s.w != nil && !s.keepW {
		s.w.Close()
	}
	if s.lines != nil {
		in.readLines(s.lines)
	}
	if s.drain != nil {
		in.ends = append(in.ends, s.drain)
		in.drained = make(chan struct{})
		go func() {
			defer close(in.drained)
			io.Copy(io.Discard, s.drain) // ends at EOF, or once stop closes it
		}()
	}
	if s.keepW {
		in.ends = append(in.ends, s.w)
	}
}

// readLines delivers the lines of PID 1's stderr from r on in.stderr,
// dropping those nobody waits for, and closes r at EOF.
func (in *instance) readLines(r *os.File) {
	in.stderr = make(chan string, 64)
	go func() {
		defer r.Close()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			select {
			case in.stderr <- sc.Text():
			default: // nobody is listening; drop
			}
		}
	}()
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
	in.closeStderr()
}

// closeStderr closes the benchmark's ends of PID 1's stderr and waits for
// their drain to return (the poller wakes its read); safe to call twice.
func (in *instance) closeStderr() {
	for _, f := range in.ends {
		f.Close()
	}
	in.ends = nil
	if in.drained != nil {
		<-in.drained
	}
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

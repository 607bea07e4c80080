package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// counter says how many of the released orphans are not reaped yet.
type counter struct {
	dir string // a pids cgroup the orphans are moved into; "" to count /proc
}

// newCounter makes a pids cgroup (v1 or v2) whose pids.current counts tasks
// until they are reaped, not merely until they exit; without one it falls
// back to counting PID 1's children in /proc (slower to poll).
func newCounter() counter {
	name := fmt.Sprintf("lfinit-bench-%d", os.Getpid())
	for _, base := range []string{"/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		if !v2HasPids(base) && !fileExists(filepath.Join(base, "pids.max")) && !fileExists(filepath.Join(base, "tasks")) {
			continue
		}
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			continue
		}
		if fileExists(filepath.Join(dir, "pids.current")) {
			return counter{dir: dir}
		}
		os.Remove(dir)
	}
	return counter{}
}

// v2HasPids reports whether a cgroup v2 directory hands the pids controller to its children.
func v2HasPids(base string) bool {
	b, err := os.ReadFile(filepath.Join(base, "cgroup.subtree_control"))
	return err == nil && strings.Contains(string(b), "pids")
}

// fileExists reports whether p exists.
func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// procs is the file the forking helper writes itself into ("" for none).
func (c counter) procs() string {
	if c.dir == "" {
		return ""
	}
	return filepath.Join(c.dir, "cgroup.procs")
}

// left counts the orphans not yet reaped under PID 1 pid.
func (c counter) left(pid int) int {
	if c.dir == "" {
		return max(0, len(children(pid))-1) // the helper itself stays
	}
	b, err := os.ReadFile(filepath.Join(c.dir, "pids.current"))
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// allExited waits until the orphans that wrote their byte have finished
// exiting: a zombie has left cgroup.procs but still counts in pids.current.
// Without a cgroup it can only give them a moment.
func (c counter) allExited(timeout time.Duration) error {
	if c.dir == "" {
		sleep(200 * time.Millisecond)
		return nil
	}
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); sleep(time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
		if err != nil {
			return err
		}
		if len(strings.TrimSpace(string(b))) == 0 {
			return nil
		}
	}
	return errors.New("orphans still exiting after their last byte")
}

// close removes the cgroup once nothing is left in it (bounded).
func (c counter) close() {
	if c.dir == "" {
		return
	}
	for range 500 {
		if os.Remove(c.dir) == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "initbench: could not remove %s\n", c.dir)
}

// reapResult is per init: orphans/s, and the init's CPU µs per orphan.
type reapResult struct {
	rate, cpu, wakeups map[string]sample
	exits              sample // burst: the orphans' own exit rate, init stopped
	method             string
	burst              bool
}

// reapFigures are one run's: orphans reaped per second, the init's CPU µs
// per orphan and context switches, and, in a burst run, how many orphans
// a second exited while the init was stopped.
type reapFigures struct {
	rate, cpu, wakeups, exits float64
}

// benchReap releases n orphans at once under each init, reps times,
// interleaved, and times how long until the last one is reaped. With
// burst, the init is stopped (SIGSTOP) while the orphans exit, and the
// clock starts when it is continued with all n of them zombies: that is
// the reaper's own speed, without the kernel's exits running beside it.
func benchReap(rng *rand.Rand, inits []initSpec, n, reps int, burst bool, orphansBin, dir string) (reapResult, error) {
	res := reapResult{rate: map[string]sample{}, cpu: map[string]sample{}, wakeups: map[string]sample{}, burst: burst}
	if free := pidHeadroom(); free < n+2000 {
		return res, fmt.Errorf("only %d pids free (pid_max minus the processes running); %d orphans need %d", free, n, n+2000)
	}
	c := newCounter()
	defer c.close()
	res.method = "cgroup pids.current"
	if c.dir == "" {
		res.method = "/proc children of PID 1"
	}
	var cs []cand
	for _, i := range inits {
		cs = append(cs, cand{name: i.name, prefix: i.argv})
	}
	for range reps {
		for _, k := range shuffled(rng, cs) {
			f, err := reapOnce(k, c, n, burst, orphansBin, dir)
			if err != nil {
				return res, fmt.Errorf("reaping %d orphans under %s: %w", n, k.name, err)
			}
			res.rate[k.name] = append(res.rate[k.name], f.rate)
			res.cpu[k.name] = append(res.cpu[k.name], f.cpu)
			res.wakeups[k.name] = append(res.wakeups[k.name], f.wakeups)
			if burst {
				res.exits = append(res.exits, f.exits)
			}
		}
	}
	return res, nil
}

// reapOnce is one run of benchReap under one init.
func reapOnce(k cand, c counter, n int, burst bool, orphansBin, dir string) (f reapFigures, err error) {
	fifo := filepath.Join(dir, "release")
	os.Remove(fifo)
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		return f, err
	}
	// Read-write, so that opening it does not wait for a reader, and
	// close-on-exec, so that no init inherits a writer: the orphans' reads
	// end together when this, the only writer, is closed.
	fd, err := unix.Open(fifo, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return f, err
	}
	released := false
	defer func() {
		if !released {
			unix.Close(fd)
		}
	}()
	child := []string{orphansBin, strconv.Itoa(n), fifo}
	if p := c.procs(); p != "" {
		child = append(child, p)
	} else {
		child = append(child, "-")
	}
	doneFD := -1
	if burst {
		done := filepath.Join(dir, "done")
		os.Remove(done)
		if err := unix.Mkfifo(done, 0o600); err != nil {
			return f, err
		}
		if doneFD, err = unix.Open(done, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0); err != nil {
			return f, err
		}
		defer unix.Close(doneFD)
		child = append(child, done)
	}
	in, err := start(k.prefix, child, startOpts{})
	if err != nil {
		return f, err
	}
	defer func() {
		in.stop()
		for range 1000 { // the namespace's teardown reaps what is left
			if c.left(in.pid) <= 0 || c.dir == "" {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	if _, err := in.expect("ready", 120*time.Second); err != nil {
		return f, err
	}
	for deadline := time.Now().Add(10 * time.Second); c.left(in.pid) != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return f, fmt.Errorf("expected %d orphans waiting, counted %d", n, c.left(in.pid))
		}
	}
	sleep(100 * time.Millisecond)
	if burst {
		if err := in.signal(unix.SIGSTOP); err != nil {
			return f, err
		}
		if err := waitStopped(in.pid); err != nil {
			return f, err
		}
		released = true
		e0 := mono()
		unix.Close(fd)
		if err := readBytes(doneFD, n, 120*time.Second); err != nil {
			return f, err
		}
		if err := c.allExited(120 * time.Second); err != nil {
			return f, err
		}
		f.exits = float64(n) / (float64(mono()-e0) / 1e9)
	}
	cpu0, ctx0 := cpuNanos(in.pid), ctxSwitches(in.pid)
	t0 := mono()
	if burst {
		if err := in.signal(unix.SIGCONT); err != nil {
			return f, err
		}
	} else {
		released = true
		unix.Close(fd)
	}
	for deadline := t0 + int64(120*time.Second); c.left(in.pid) > 0; sleep(100 * time.Microsecond) {
		if mono() > deadline {
			return f, errors.New("orphans still unreaped after 120s")
		}
	}
	t1 := mono()
	cpu1, ctx1 := cpuNanos(in.pid), ctxSwitches(in.pid)
	f.rate, f.cpu, f.wakeups = float64(n)/(float64(t1-t0)/1e9), float64(cpu1-cpu0)/1e3/float64(n), float64(ctx1-ctx0)
	return f, nil
}

// waitStopped waits until every thread of pid is stopped.
func waitStopped(pid int) error {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); sleep(time.Millisecond) {
		files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		stopped := len(files) > 0
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if i := strings.LastIndexByte(string(b), ')'); i < 0 || i+2 >= len(b) || b[i+2] != 'T' {
				stopped = false
			}
		}
		if stopped {
			return nil
		}
	}
	return errors.New("the init did not stop on SIGSTOP")
}

// readBytes reads n bytes from the non-blocking fd within timeout.
func readBytes(fd, n int, timeout time.Duration) error {
	buf := make([]byte, 4096)
	deadline := time.Now().Add(timeout)
	for got := 0; got < n; {
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d orphans exited in %v", got, n, timeout)
		}
		k, err := unix.Read(fd, buf[:min(len(buf), n-got)])
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
			unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 100)
		case err != nil:
			return err
		default:
			got += k
		}
	}
	return nil
}

// pidHeadroom is how many more processes the host's pid space holds.
func pidHeadroom() int {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		return 0
	}
	pidMax, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	entries, _ := os.ReadDir("/proc")
	used := 0
	for _, e := range entries {
		if e.Name()[0] >= '0' && e.Name()[0] <= '9' {
			used += threads(atoi(e.Name()))
		}
	}
	return pidMax - used
}

// atoi is strconv.Atoi without the error: /proc names are numbers.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

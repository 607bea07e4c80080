// Package e2e tests the built lfinit binary as a real PID 1, in a fresh PID
// namespace made with unshare(1), and as a subreaper, with test/helper as
// its child. It needs root (CI runs as root); elsewhere it skips.
package e2e

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
	"github.com/light-fabric/lfinit/internal/testkit/memdir"
)

var (
	lfinitBin string // built once by TestMain
	helperBin string
	skipWhy   string
)

func TestMain(m *testing.M) {
	if os.Getenv("E2E_EXEC_BLOCKED") != "" {
		execWithBlockedMask()
	}
	flag.Parse() // for testing.Short
	if testing.Short() {
		// Nothing built, every test that runs lfinit skips: -short is the
		// quick pre-commit run.
		skipWhy = "end-to-end tests build lfinit and run it as PID 1 (-short: scripts/test runs them)"
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "lfinit-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lfinitBin, helperBin = filepath.Join(dir, "lfinit"), filepath.Join(dir, "helper")
	for bin, pkg := range map[string]string{lfinitBin: "../../cmd/lfinit", helperBin: "../helper"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", pkg, err, out)
			os.Exit(1)
		}
	}
	switch {
	case os.Geteuid() != 0:
		skipWhy = "end-to-end tests need root for unshare --pid (run them as root, as CI does)"
	default:
		if out, err := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "true").CombinedOutput(); err != nil {
			skipWhy = fmt.Sprintf("unshare --pid --fork --mount-proc does not work here: %v %s", err, out)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// execWithBlockedMask is the test binary re-executed as a parent that blocks
// signals and then execs lfinit, as a careless shell or supervisor might.
func execWithBlockedMask() {
	runtime.LockOSThread()
	var set unix.Sigset_t
	for _, s := range []syscall.Signal{syscall.SIGUSR1, syscall.SIGHUP, syscall.SIGTERM} {
		set.Val[(s-1)/64] |= 1 << ((uint(s) - 1) % 64)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil); err != nil {
		panic(err)
	}
	args := strings.Split(os.Getenv("E2E_EXEC_BLOCKED"), "\x1f")
	env := []string{"PATH=" + os.Getenv("PATH")}
	panic(syscall.Exec(args[0], args, env))
}

// long skips a test of more than about a second under -short, the quick
// pre-commit run; scripts/test runs it.
func long(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("takes a second or more (-short); scripts/test runs it")
	}
}

func needRoot(t *testing.T) {
	t.Helper()
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
}

// run is one lfinit process under test.
type run struct {
	t      *testing.T
	cmd    *exec.Cmd
	dir    string
	pid1   bool
	stdout bytes.Buffer
	stderr measure.Buffer
	done   chan struct{}
	code   int
	took   time.Duration
	begun  time.Time
	pidfd  int // lfinit's pidfd, once known: signals never hit a recycled pid
	pid    int
}

// startPID1 starts lfinit as PID 1 of a new PID namespace.
func startPID1(t *testing.T, lfinitArgs ...string) *run {
	return start(t, true, lfinitArgs)
}

// startSubreaper starts lfinit as an ordinary child of the test.
func startSubreaper(t *testing.T, lfinitArgs ...string) *run {
	return start(t, false, lfinitArgs)
}

func start(t *testing.T, pid1 bool, lfinitArgs []string) *run {
	t.Helper()
	return startWith(t, pid1, lfinitArgs, nil)
}

// startWith starts lfinit with extra environment variables and an
// optional wrapper that runs first (as PID 1, in the new namespace) and
// then execs lfinit (so lfinit keeps the wrapper's pid).
func startWith(t *testing.T, pid1 bool, lfinitArgs, env []string, wrapper ...string) *run {
	t.Helper()
	return startLaunch(t, pid1, lfinitArgs, launch{env: env, wrapper: wrapper})
}

// launch is how lfinit is started, beyond its arguments.
type launch struct {
	env []string
	// wrapper runs first and execs lfinit with its arguments appended (as
	// PID 1, inside the new namespace); HELPER and DIR are replaced.
	wrapper []string
	files   []*os.File // lfinit's parent's descriptors 3, 4, …
	inDir   bool       // start in the run's directory, not the test's
}

// startLaunch starts lfinit as l says.
func startLaunch(t *testing.T, pid1 bool, lfinitArgs []string, l launch) *run {
	t.Helper()
	needRoot(t)
	r := &run{t: t, dir: memdir.New(t), pid1: pid1, done: make(chan struct{})}
	args := append(r.expand(l.wrapper), lfinitBin)
	args = append(args, r.expand(lfinitArgs)...)
	if pid1 {
		r.cmd = exec.Command("unshare", append([]string{"--pid", "--fork", "--mount-proc"}, args...)...)
	} else {
		r.cmd = exec.Command(args[0], args[1:]...)
	}
	env := l.env
	r.cmd.ExtraFiles = l.files
	if l.inDir {
		r.cmd.Dir = r.dir
	}
	r.cmd.Env = append(os.Environ(), env...)
	if !setsVerbosity(env) {
		// The tests read the whole story, which the default level keeps
		// quiet; a flag still wins over this.
		r.cmd.Env = append(r.cmd.Env, "LFINIT_LOG_LEVEL=debug")
	}
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r.begun = time.Now()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.cmd.Wait()
		r.took = time.Since(r.begun)
		r.code = r.cmd.ProcessState.ExitCode()
		if ws, ok := r.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.code = 128 + int(ws.Signal())
		}
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
			if p := r.lfinitPid(); p > 0 {
				// Not as PID 1, its tree would outlive it and hold the
				// output pipes open.
				for _, d := range descendantsOf(p) {
					syscall.Kill(d, syscall.SIGKILL)
				}
				syscall.Kill(p, syscall.SIGKILL)
			}
			<-r.done
		}
		if t.Failed() {
			t.Logf("lfinit stderr:\n%s", r.stderr.String())
		}
	})
	return r
}

// expand replaces HELPER and DIR in args.
func (r *run) expand(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(strings.ReplaceAll(a, "HELPER", helperBin), "DIR", r.dir)
	}
	return out
}

// setsVerbosity reports whether env chooses the log level itself.
func setsVerbosity(env []string) bool {
	for _, kv := range env {
		for _, k := range []string{"LFINIT_LOG_LEVEL=", "TINI_VERBOSITY=", "DUMB_INIT_DEBUG="} {
			if strings.HasPrefix(kv, k) {
				return true
			}
		}
	}
	return false
}

// path is a file in the run's private directory.
func (r *run) path(name string) string { return filepath.Join(r.dir, name) }

// lfinitPid is lfinit's pid as the test sees it (unshare's child when PID 1).
func (r *run) lfinitPid() int {
	if r.pid > 0 {
		return r.pid
	}
	if !r.pid1 {
		return r.remember(r.cmd.Process.Pid)
	}
	// The limit bounds a hang, not the machine's speed.
	for deadline := time.Now().Add(stall); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if kids := unshareChildren(r.cmd.Process.Pid); len(kids) > 0 {
			return r.remember(kids[0])
		}
		select {
		case <-r.done:
			return 0
		default:
		}
	}
	return 0
}

// unshareChildren lists the children of unshare (single-threaded, so its
// main thread's children file holds them all): one small read, where
// childrenOf reads every process's stat, which takes seconds beside a
// test with tens of thousands of orphans. childrenOf where the kernel
// has no children files.
func unshareChildren(pid int) []int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return childrenOf(pid)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// remember pins pid with a pidfd, so later signals reach this process or
// nothing.
func (r *run) remember(pid int) int {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return 0
	}
	r.pid, r.pidfd = pid, fd
	r.t.Cleanup(func() { unix.Close(fd) })
	return pid
}

// signal sends sig to lfinit.
func (r *run) signal(sig syscall.Signal) {
	r.t.Helper()
	if err := r.trySignal(sig); err != nil {
		r.t.Fatalf("signal %v to lfinit: %v", sig, err)
	}
}

// trySignal sends sig to lfinit, which may have exited already.
func (r *run) trySignal(sig syscall.Signal) error {
	if r.lfinitPid() <= 1 {
		return fmt.Errorf("no lfinit pid")
	}
	return unix.PidfdSendSignal(r.pidfd, sig, nil, 0)
}

// wait waits for lfinit to exit and returns its exit code.
func (r *run) wait(limit time.Duration) int {
	r.t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(limit):
		r.t.Fatalf("lfinit still running after %v\nstderr:\n%s", limit, r.stderr.String())
	}
	return -1
}

// waitFile waits until name exists in the run directory.
func (r *run) waitFile(name string) {
	r.t.Helper()
	waitFor(r.t, 10*time.Second, "file "+name, func() bool {
		_, err := os.Stat(r.path(name))
		return err == nil
	})
}

// waitLog waits until lfinit's log contains text.
func (r *run) waitLog(text string) {
	r.t.Helper()
	waitFor(r.t, 10*time.Second, "log line "+strconv.Quote(text), func() bool {
		return strings.Contains(r.stderr.String(), text)
	})
}

// stall is how long a wait on work in progress lets nothing move before
// it fails. It bounds a hang, not the machine's speed: while the work
// moves, the wait goes on.
const stall = time.Minute

// waitMoving waits until done holds, for as long as progress keeps
// changing, and fails only when progress has not changed for stall. It
// is the wait for work whose length is the machine's (thousands of
// forks on a machine that forks slowly), where a fixed limit would bet
// on its speed.
func waitMoving(t *testing.T, what string, done func() bool, progress func() string) {
	t.Helper()
	last, moved := progress(), time.Now()
	for !done() {
		// Read after a pause of the test itself too: a descheduled test
		// must not take the work's progress for a stall.
		if p := progress(); p != last {
			last, moved = p, time.Now()
		} else if time.Since(moved) > stall {
			t.Fatalf("waiting for %s: nothing moved for %v (last: %s)", what, stall, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitMoving waits for lfinit to exit, for as long as its log or
// progress (which may be nil) keeps changing, and returns its exit code.
func (r *run) waitMoving(progress func() string) int {
	r.t.Helper()
	exited := func() bool {
		select {
		case <-r.done:
			return true
		default:
			return false
		}
	}
	waitMoving(r.t, "lfinit to exit", exited, func() string {
		p := strconv.Itoa(len(r.stderr.String()))
		if progress != nil {
			p += " " + progress()
		}
		return p
	})
	return r.code
}

// nsProcs counts the processes of lfinit's PID namespace (lfinit as PID
// 1), zombies included, from the namespace's own /proc: a readdir, cheap
// even with tens of thousands of them, where reading every process's stat
// would load the machine the test measures. 0 once the namespace is gone.
func (r *run) nsProcs() int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/root/proc", r.lfinitPid()))
	if err != nil {
		return 0
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	n := 0
	for _, name := range names {
		if _, err := strconv.Atoi(name); err == nil {
			n++
		}
	}
	return n
}

// orphansMade is the helper's last "orphans-made N" in the record at
// path: how many orphans it has started so far.
func orphansMade(path string) int {
	b, _ := os.ReadFile(path)
	i := bytes.LastIndex(b, []byte("orphans-made "))
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+len("orphans-made "):]))
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out after %v waiting for %s", limit, what)
}

// event is one line of a helper record file.
type event struct {
	kind string // signal, child-signal, daemon-signal, exit, start, …
	sig  int
	at   time.Time
	line string
}

func readRecord(t *testing.T, path string) []event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	var evs []event
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		ev := event{kind: f[0], line: sc.Text()}
		if strings.HasSuffix(f[0], "signal") && len(f) == 3 {
			ev.sig, _ = strconv.Atoi(f[1])
			ns, _ := strconv.ParseInt(f[2], 10, 64)
			ev.at = time.Unix(0, ns)
		}
		evs = append(evs, ev)
	}
	return evs
}

// signals lists the signal numbers of kind in the record, in order.
func signals(evs []event, kind string) []int {
	var out []int
	for _, e := range evs {
		if e.kind == kind {
			out = append(out, e.sig)
		}
	}
	return out
}

func firstSignal(t *testing.T, evs []event, kind string, sig int) time.Time {
	t.Helper()
	for _, e := range evs {
		if e.kind == kind && e.sig == sig {
			return e.at
		}
	}
	t.Fatalf("no %s %d in record", kind, sig)
	return time.Time{}
}

// recorded waits until the record at path holds a line of kind for sig.
func recorded(t *testing.T, path, kind string, sig int) {
	t.Helper()
	waitFor(t, 5*time.Second, fmt.Sprintf("%s %d in %s", kind, sig, filepath.Base(path)), func() bool {
		b, _ := os.ReadFile(path)
		return bytes.Contains(b, []byte(fmt.Sprintf("%s %d ", kind, sig)))
	})
}

// childrenOf lists the pids whose parent is ppid.
func childrenOf(ppid int) []int {
	var out []int
	for _, p := range procTable() {
		if p.ppid == ppid {
			out = append(out, p.pid)
		}
	}
	return out
}

// descendantsOf lists pid's descendants, children first.
func descendantsOf(pid int) []int {
	var out []int
	for i, queue := 0, []int{pid}; i < len(queue); i++ {
		kids := childrenOf(queue[i])
		out, queue = append(out, kids...), append(queue, kids...)
	}
	return out
}

type proc struct {
	pid, ppid int
	state     byte
}

func procTable() []proc {
	entries, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		out = append(out, proc{pid: pid, ppid: ppid, state: f[0][0]})
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func between(t *testing.T, what string, got, lo, hi time.Duration) {
	t.Helper()
	if got < lo || got > hi {
		t.Fatalf("%s took %v, want between %v and %v", what, got, lo, hi)
	}
}

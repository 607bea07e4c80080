// Command helper is a fake service that lfinit runs as its child in end-to-end tests.
//
// It records what happens to it (start, signals, exit) as single-write lines in
// an append-only file, dies on chosen signals the way a real service would, and
// can leave behind orphans, zombies, daemons, children and fork loops for the
// init process to clean up. Helper processes it starts are re-execs of the same
// binary in a hidden -mode.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Modes selected with the internal -mode flag; the empty mode is the main helper.
const (
	modeMain         = ""
	modeOrphanParent = "orphan-parent"
	modeDaemonize    = "daemonize"
	modeDaemon       = "daemon"
	modeSleeper      = "sleeper"
	modeForkloop     = "forkloop"
)

// config holds the parsed command line.
type config struct {
	mode             string
	record           string
	dieOn            string
	ignore           string
	dieDelay         time.Duration
	exitCode         int
	after            time.Duration
	orphans          int
	n                int
	base             int
	daemon           string
	daemonIgnoreTerm bool
	daemonLate       time.Duration
	daemonTermExit   int
	daemonListen     string
	children         int
	childIgnoreTerm  bool
	forkloop         bool
	pidfile          string
	readyFile        string
	readyFD          int
	print            string
	stderr           string
	listen           string
	listenAfter      time.Duration
	setsid           bool
	activation       string
	identity         bool
	request          string
	notify           string
}

// errUsage means the flag package has already printed the error and usage.
var errUsage = errors.New("bad usage")

// parseFlags parses args into a config; flag accepts both -name and --name.
func parseFlags(args []string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("helper", flag.ContinueOnError)
	fs.StringVar(&c.record, "record", "", "append-only record `file` for start/signal/exit lines")
	fs.StringVar(&c.dieOn, "die-on", "1,2,3,15", "comma `list` of signal numbers to die by (empty: none)")
	fs.StringVar(&c.ignore, "ignore", "", "comma `list` of signal numbers removed from -die-on (still recorded)")
	fs.DurationVar(&c.dieDelay, "die-delay", 0, "wait this long after a -die-on signal before dying")
	fs.IntVar(&c.exitCode, "exit", -1, "exit with this `code` after -after (negative: never)")
	fs.DurationVar(&c.after, "after", 0, "delay before -exit, counted from when setup is done")
	fs.IntVar(&c.orphans, "orphans", 0, "create `N` orphans/zombies for init to reap")
	fs.StringVar(&c.daemon, "daemon", "", "start a setsid daemon grandchild and write its pid to `pidfile`")
	fs.BoolVar(&c.daemonIgnoreTerm, "daemon-ignore-term", false, "the -daemon ignores SIGTERM")
	fs.DurationVar(&c.daemonLate, "daemon-pidfile-delay", 0, "the -daemon writes its pidfile itself, this long after it started (an init.d-style service)")
	fs.IntVar(&c.daemonTermExit, "daemon-term-exit", -1, "the -daemon exits with this `code` on SIGTERM (negative: dies by it)")
	fs.StringVar(&c.daemonListen, "daemon-listen", "", "the -daemon serves HTTP 200 on `addr`, -listen-after after it started")
	fs.IntVar(&c.children, "children", 0, "start `N` child processes in the helper's process group")
	fs.BoolVar(&c.childIgnoreTerm, "children-ignore-term", false, "the -children survive SIGTERM")
	fs.BoolVar(&c.forkloop, "forkloop", false, "start a setsid process that forks short-lived children until killed")
	fs.StringVar(&c.pidfile, "pidfile", "", "write the helper's pid to `file` at start")
	fs.StringVar(&c.readyFile, "ready-file", "", "write \"ready\" to `file` once setup is done")
	fs.StringVar(&c.print, "print", "", "print `text` to stdout at start")
	fs.StringVar(&c.stderr, "stderr", "", "print `text` to stderr at start")
	fs.BoolVar(&c.identity, "identity", false, "print the ids, groups and capabilities of /proc/self/status, and HOME, to stdout at start")
	fs.BoolVar(&c.setsid, "setsid", false, "start a session (and process group) of its own first")
	fs.StringVar(&c.listen, "listen", "", "serve HTTP 200 on `addr` (a service that becomes ready)")
	fs.DurationVar(&c.listenAfter, "listen-after", 0, "start listening only after this delay (slow startup)")
	fs.StringVar(&c.activation, "activation", "", "write what socket activation passed (LISTEN_*, descriptor 3) to `file`, and answer on descriptor 3 if sd_listen_fds(3) would take it")
	fs.StringVar(&c.notify, "notify", "", "once setup is done, send `text` (\\n between lines) to $NOTIFY_SOCKET, as sd_notify(3) does")
	fs.StringVar(&c.request, "request", "", "at start, GET `url` and record \"request STATUS UNIXNANO\" (a shutdown hook that deregisters)")
	fs.StringVar(&c.mode, "mode", modeMain, "internal: re-exec mode")
	fs.IntVar(&c.n, "n", 0, "internal: orphan count for -mode orphan-parent")
	fs.IntVar(&c.base, "base", 0, "internal: orphans made before this -mode orphan-parent started (its progress lines count from here)")
	fs.IntVar(&c.readyFD, "ready-fd", -1, "internal: `fd` to report readiness on to the parent")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil, err
		}
		return nil, errUsage
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.exitCode < 0 && c.after != 0 {
		return nil, fmt.Errorf("-after needs -exit")
	}
	if c.orphans < 0 || c.children < 0 || c.n < 0 || c.base < 0 {
		return nil, fmt.Errorf("counts must not be negative")
	}
	return c, nil
}

// parseSignalList parses a comma-separated list of decimal signal numbers; "" is none.
func parseSignalList(s string) ([]unix.Signal, error) {
	var sigs []unix.Signal
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 64 {
			return nil, fmt.Errorf("bad signal number %q", f)
		}
		sigs = append(sigs, unix.Signal(n))
	}
	return sigs, nil
}

// dieSet returns the signals in dieOn that are not in ignore.
func dieSet(dieOn, ignore []unix.Signal) map[unix.Signal]bool {
	set := make(map[unix.Signal]bool)
	for _, s := range dieOn {
		set[s] = true
	}
	for _, s := range ignore {
		delete(set, s)
	}
	return set
}

// caughtSignals lists the signals the helper records.
//
// Left out: 17 SIGCHLD (our own children would flood the record), 23 SIGURG
// (the Go runtime uses it for preemption), 13 SIGPIPE (Go treats it specially),
// 9/19 (uncatchable), 27 SIGPROF (the runtime's), and 32/33 (reserved by libc).
// The synchronous faults (4, 5, 7, 8, 11, 31) are caught when another
// process sends them, as lfinit does when it relays them.
func caughtSignals() []os.Signal {
	nums := []int{1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 14, 15, 16, 18, 20, 21, 22, 24, 25, 26, 28, 29, 30, 31}
	for n := 34; n <= 64; n++ {
		nums = append(nums, n)
	}
	sigs := make([]os.Signal, len(nums))
	for i, n := range nums {
		sigs[i] = unix.Signal(n)
	}
	return sigs
}

// terminatesByDefault reports whether the kernel's default action for sig ends the process.
func terminatesByDefault(sig unix.Signal) bool {
	switch sig {
	case unix.SIGCHLD, unix.SIGCONT, unix.SIGURG, unix.SIGWINCH, // default: ignore
		unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU: // default: stop
		return false
	}
	return true
}

// reexecArgs builds the arguments for re-executing the helper in mode; -record is always passed on.
func reexecArgs(mode, record string, extra ...string) []string {
	return append([]string{"-mode", mode, "-record=" + record}, extra...)
}

// recorder appends lines to the record file; the zero fd -1 means recording is off.
type recorder struct{ fd int }

// openRecorder opens path for appending, or returns a no-op recorder if path is empty.
func openRecorder(path string) (*recorder, error) {
	if path == "" {
		return &recorder{fd: -1}, nil
	}
	fd, err := unix.Open(path, unix.O_APPEND|unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open record file: %w", err)
	}
	return &recorder{fd: fd}, nil
}

// printf writes one line with a single write(2), so O_APPEND keeps lines from several processes whole.
func (r *recorder) printf(format string, a ...any) {
	if r.fd < 0 {
		return
	}
	line := []byte(fmt.Sprintf(format, a...) + "\n")
	for {
		_, err := unix.Write(r.fd, line)
		if err != unix.EINTR {
			return
		}
	}
}

// endOnce makes sure only the first of the exit timer and a fatal signal ends the
// process; a second caller blocks in Do until the process is gone.
var endOnce sync.Once

// exitWith records the exit and exits with code.
func exitWith(rec *recorder, code int) {
	endOnce.Do(func() {
		rec.printf("exit %d %d", code, time.Now().UnixNano())
		os.Exit(code)
	})
}

// dieBy ends the process by sig for real, so the parent sees "killed by signal sig".
func dieBy(rec *recorder, sig unix.Signal) {
	endOnce.Do(func() {
		code := 128 + int(sig)
		if !terminatesByDefault(sig) {
			// Raising it would not end us, so report it the way a shell would.
			rec.printf("exit %d %d", code, time.Now().UnixNano())
			os.Exit(code)
		}
		signal.Reset(sig)
		// signal.Reset puts back Go's handler, not SIG_DFL: Go turns SIGQUIT/SIGABRT
		// into exit status 2 and ignores e.g. SIGUSR1, so set SIG_DFL ourselves.
		if err := setDefaultAction(sig); err != nil {
			fmt.Fprintf(os.Stderr, "helper: rt_sigaction(%d): %v\n", sig, err)
		}
		// No core files from SIGQUIT/SIGABRT littering the test directory.
		_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
		_ = unix.Kill(os.Getpid(), sig)
		time.Sleep(10 * time.Second)
		// Only reached if the signal somehow did not kill us.
		rec.printf("exit %d %d", code, time.Now().UnixNano())
		os.Exit(code)
	})
}

// setDefaultAction sets sig to SIG_DFL with rt_sigaction.
func setDefaultAction(sig unix.Signal) error {
	// An all-zero kernel struct sigaction is SIG_DFL, no flags, empty mask on
	// every Linux architecture, so its exact layout does not matter; 8 is the
	// kernel's sigset size.
	var act [8]uint64
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig),
		uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// handleSignals records each caught signal as "<prefix>signal N unixnano" and starts dying on those in die.
func handleSignals(rec *recorder, prefix string, die map[unix.Signal]bool, delay time.Duration) {
	ch := make(chan os.Signal, 256) // large, so a burst of signals is not dropped
	signal.Notify(ch, caughtSignals()...)
	go func() {
		dying := false
		for s := range ch {
			now := time.Now().UnixNano() // first, so the timestamp is as close to delivery as we can get
			sig := s.(syscall.Signal)
			rec.printf("%ssignal %d %d", prefix, int(sig), now)
			if die[sig] && !dying {
				// Keep recording other signals while the delay (in-flight work) runs.
				dying = true
				time.AfterFunc(delay, func() { dieBy(rec, sig) })
			}
		}
	}()
}

// ids returns the process's pid, pgid, ppid and session id.
func ids() (pid, pgid, ppid, sid int) {
	sid, _ = unix.Getsid(0)
	return os.Getpid(), unix.Getpgrp(), os.Getppid(), sid
}

// writeFileAtomic writes data to path via a temporary file and rename, so readers never see a partial file.
func writeFileAtomic(path string, data string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// findBin returns the path of a system binary, which may live in /bin or /usr/bin.
func findBin(name string) string {
	for _, dir := range []string{"/bin", "/usr/bin"} {
		if p := dir + "/" + name; fileExists(p) {
			return p
		}
	}
	return "/bin/" + name
}

// fileExists reports whether path exists.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// devNullFiles returns /dev/null as stdin/stdout/stderr for ForkExec, so
// leftover processes do not hold the test's output pipes open.
func devNullFiles() []uintptr {
	// A raw fd, not an *os.File whose finalizer could close it under a long loop.
	fd, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		fatalf(nil, "open %s: %v", os.DevNull, err)
	}
	return []uintptr{uintptr(fd), uintptr(fd), uintptr(fd)}
}

// fatalf reports a setup failure on stderr (and in the record, if open) and exits 1.
func fatalf(rec *recorder, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	fmt.Fprintln(os.Stderr, "helper:", msg)
	if rec != nil {
		rec.printf("error %s", msg)
	}
	os.Exit(1)
}

// self returns the helper's own executable for re-execs.
func self(rec *recorder) string {
	exe, err := os.Executable()
	if err != nil {
		fatalf(rec, "os.Executable: %v", err)
	}
	return exe
}

func main() {
	c, err := parseFlags(os.Args[1:])
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err == errUsage {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	rec, err := openRecorder(c.record)
	if err != nil {
		fatalf(nil, "%v", err)
	}
	switch c.mode {
	case modeMain:
		runMain(c, rec)
	case modeOrphanParent:
		runOrphanParent(c, rec)
	case modeDaemonize:
		runDaemonize(c, rec)
	case modeDaemon:
		runDaemon(c, rec)
	case modeSleeper:
		runSleeper(c, rec)
	case modeForkloop:
		runForkloop(c, rec)
	default:
		fatalf(rec, "unknown -mode %q", c.mode)
	}
}

// runMain is the helper proper: record, set up the requested mess, then wait to be ended.
func runMain(c *config, rec *recorder) {
	dieOn, err := parseSignalList(c.dieOn)
	if err != nil {
		fatalf(rec, "-die-on: %v", err)
	}
	ignore, err := parseSignalList(c.ignore)
	if err != nil {
		fatalf(rec, "-ignore: %v", err)
	}
	// Catch signals before anything else, so none sent during setup kills us unrecorded.
	handleSignals(rec, "", dieSet(dieOn, ignore), c.dieDelay)
	if c.setsid {
		if _, err := syscall.Setsid(); err != nil {
			fatalf(rec, "-setsid: %v", err)
		}
	}

	pid, pgid, ppid, sid := ids()
	rec.printf("start pid=%d pgid=%d ppid=%d sid=%d", pid, pgid, ppid, sid)
	if c.pidfile != "" {
		if err := writeFileAtomic(c.pidfile, fmt.Sprintf("%d\n", pid)); err != nil {
			fatalf(rec, "-pidfile: %v", err)
		}
	}
	if c.print != "" {
		fmt.Fprintln(os.Stdout, c.print)
	}
	if c.stderr != "" {
		fmt.Fprintln(os.Stderr, c.stderr)
	}
	if c.identity {
		printIdentity()
	}

	// In batches: an intermediate's dead children stay its zombies until it
	// exits, so one intermediate making 50,000 would exhaust the pid space
	// before init ever sees them.
	for made := 0; made < c.orphans; made += orphanBatch {
		n := min(c.orphans-made, orphanBatch)
		runIntermediate(rec, reexecArgs(modeOrphanParent, c.record, "-n", strconv.Itoa(n), "-base", strconv.Itoa(made)))
	}
	if c.orphans > 0 {
		rec.printf("orphans-done %d", c.orphans)
	}
	if c.daemon != "" {
		extra := append([]string{"-daemon", c.daemon}, daemonArgs(c)...)
		runIntermediate(rec, reexecArgs(modeDaemonize, c.record, extra...))
	}
	for range c.children {
		var extra []string
		if c.childIgnoreTerm {
			extra = append(extra, "-children-ignore-term")
		}
		// Never waited for: they are meant to outlive the helper.
		cmd := exec.Command(self(rec), reexecArgs(modeSleeper, c.record, extra...)...)
		if err := startAndAwaitReady(cmd); err != nil {
			fatalf(rec, "start child: %v", err)
		}
		rec.printf("child-pid %d", cmd.Process.Pid)
	}
	if c.forkloop {
		cmd := exec.Command(self(rec), reexecArgs(modeForkloop, c.record)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := startAndAwaitReady(cmd); err != nil {
			fatalf(rec, "start forkloop: %v", err)
		}
		rec.printf("forkloop-pid %d", cmd.Process.Pid)
	}

	if c.activation != "" {
		reportActivation(rec, c.activation)
	}
	if c.request != "" {
		request(rec, c.request)
	}
	if c.listen != "" {
		// The listener is opened late on purpose: readiness gating must wait for it.
		time.AfterFunc(c.listenAfter, func() { serveHTTP(rec, c.listen) })
	}
	if c.notify != "" {
		sdNotify(rec, strings.ReplaceAll(c.notify, `\n`, "\n"))
	}
	if c.readyFile != "" {
		if err := writeFileAtomic(c.readyFile, "ready\n"); err != nil {
			fatalf(rec, "-ready-file: %v", err)
		}
	}
	// Counted from here, so -exit 0 still leaves the requested children behind.
	if c.exitCode >= 0 {
		time.AfterFunc(c.after, func() { exitWith(rec, c.exitCode) })
	}
	select {}
}

// sdNotify sends text to $NOTIFY_SOCKET (a path, or @ for the abstract
// namespace) and records it.
func sdNotify(rec *recorder, text string) {
	addr := os.Getenv("NOTIFY_SOCKET")
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		fatalf(rec, "-notify: %v", err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(text)); err != nil {
		fatalf(rec, "-notify: %v", err)
	}
	rec.printf("notified %s", addr)
}

// request GETs url and records its status code (0 when it failed).
func request(rec *recorder, url string) {
	code := 0
	if resp, err := http.Get(url); err == nil {
		code = resp.StatusCode
		resp.Body.Close()
	}
	rec.printf("request %d %d", code, time.Now().UnixNano())
}

// serveHTTP answers 200 to every request on addr, recording when it starts.
func serveHTTP(rec *recorder, addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fatalf(rec, "-listen: %v", err)
	}
	rec.printf("listening %s %d", addr, time.Now().UnixNano())
	http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	}))
}

// reportActivation writes what socket activation passed, as
// sd_listen_fds(3) reads it, and when that accepts descriptor 3 as the one
// listening socket, answers every connection on it with the helper's pid.
func reportActivation(rec *recorder, path string) {
	pid := os.Getpid()
	lpid, nfds := os.Getenv("LISTEN_PID"), os.Getenv("LISTEN_FDS")
	// Inherited, it has no close-on-exec; the helper's own descriptors
	// (the Go runtime may have taken 3 when none was inherited) have it.
	fd3 := "none"
	if flags, err := unix.FcntlInt(3, unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
		fd3 = "other"
		if v, err := unix.GetsockoptInt(3, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err == nil && v == 1 {
			fd3 = "listening"
		}
	}
	accepted := lpid == strconv.Itoa(pid) && nfds == "1" && fd3 == "listening"
	line := fmt.Sprintf("pid=%d listen_pid=%s listen_fds=%s listen_fdnames=%s fd3=%s sd_listen_fds=%v\n",
		pid, lpid, nfds, os.Getenv("LISTEN_FDNAMES"), fd3, accepted)
	if err := writeFileAtomic(path, line); err != nil {
		fatalf(rec, "-activation: %v", err)
	}
	if !accepted {
		return
	}
	l, err := net.FileListener(os.NewFile(3, "LISTEN_FDS"))
	if err != nil {
		fatalf(rec, "-activation: %v", err)
	}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(conn, "hello from %d\n", pid)
			conn.Close()
		}
	}()
}

// orphanBatch is how many orphans one intermediate process leaves behind.
const orphanBatch = 2000

// orphanProgress is how often (in orphans) an intermediate records
// "orphans-made TOTAL": a test waits as long as the count moves, since how
// long thousands of forks take is the machine's speed, not lfinit's.
const orphanProgress = 100

// runIntermediate runs the helper in another mode as a direct child and waits for it to exit.
func runIntermediate(rec *recorder, args []string) {
	cmd := exec.Command(self(rec), args...)
	cmd.Stderr = os.Stderr // it exits promptly, so sharing stderr cannot hold a pipe open for long
	if err := cmd.Run(); err != nil {
		fatalf(rec, "%s: %v", args[1], err)
	}
}

// childReadyFD is the descriptor a started helper process reports readiness on (the first ExtraFiles entry).
const childReadyFD = 3

// startAndAwaitReady starts a long-lived helper process and waits until it has
// its signal handling in place, so a test acting on -ready-file cannot signal
// it too early (and kill it unrecorded). cmd must run a mode that calls notifyReady.
func startAndAwaitReady(cmd *exec.Cmd) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd.Args = append(cmd.Args, "-ready-fd", strconv.Itoa(childReadyFD))
	cmd.ExtraFiles = []*os.File{w}
	err = cmd.Start()
	w.Close() // only the child may hold the write end, so its death gives us EOF
	if err != nil {
		return err
	}
	if _, err := r.Read(make([]byte, 1)); err != nil {
		return fmt.Errorf("pid %d never reported ready: %w", cmd.Process.Pid, err)
	}
	return nil
}

// notifyReady tells the parent that started us with startAndAwaitReady that setup is done, and closes fd.
func notifyReady(fd int) {
	if fd < 0 {
		return
	}
	_, _ = unix.Write(fd, []byte{1})
	// Closed so the process (e.g. a daemon) keeps no pipe to its parent.
	_ = unix.Close(fd)
}

// runOrphanParent starts c.n short-lived children, waits for none and exits,
// leaving orphans (still running) and zombies (already dead) to init. It
// records "orphans-made TOTAL" (counting c.base before it) every
// orphanProgress orphans and after the last.
func runOrphanParent(c *config, rec *recorder) {
	// Plain ForkExec of tiny binaries, since re-execing Go thousands of times is too slow.
	files := devNullFiles()
	env := os.Environ() // passed on, so tests can find every descendant by a marker variable
	trueBin, sleepBin := findBin("true"), findBin("sleep")
	for i := range c.n {
		argv := []string{trueBin}
		if i%2 == 1 {
			argv = []string{sleepBin, "0.2"}
		}
		if _, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{Files: files, Env: env}); err != nil {
			fatalf(rec, "orphan %d: %v", i, err)
		}
		if made := i + 1; made%orphanProgress == 0 || made == c.n {
			rec.printf("orphans-made %d", c.base+made)
		}
	}
	os.Exit(0)
}

// runDaemonize starts the daemon in its own session, publishes its pid and exits without waiting.
func runDaemonize(c *config, rec *recorder) {
	extra := daemonArgs(c)
	if c.daemonLate > 0 {
		extra = append(extra, "-daemon", c.daemon)
	}
	// Stdio stays nil (/dev/null) so the daemon holds no test pipes open.
	cmd := exec.Command(self(rec), reexecArgs(modeDaemon, c.record, extra...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := startAndAwaitReady(cmd); err != nil {
		fatalf(rec, "start daemon: %v", err)
	}
	if c.daemonLate > 0 {
		os.Exit(0) // the daemon writes its pidfile itself, later
	}
	if err := writeFileAtomic(c.daemon, fmt.Sprintf("%d\n", cmd.Process.Pid)); err != nil {
		fatalf(rec, "daemon pidfile: %v", err)
	}
	os.Exit(0)
}

// daemonArgs passes the -daemon-* options on to the daemon's re-execs.
func daemonArgs(c *config) []string {
	var extra []string
	if c.daemonIgnoreTerm {
		extra = append(extra, "-daemon-ignore-term")
	}
	if c.daemonLate > 0 {
		extra = append(extra, "-daemon-pidfile-delay", c.daemonLate.String())
	}
	if c.daemonTermExit >= 0 {
		extra = append(extra, "-daemon-term-exit", strconv.Itoa(c.daemonTermExit))
	}
	if c.daemonListen != "" {
		extra = append(extra, "-daemon-listen", c.daemonListen, "-listen-after", c.listenAfter.String())
	}
	return extra
}

// runDaemon records its start and signals and runs until TERM (unless ignored) or KILL.
func runDaemon(c *config, rec *recorder) {
	die := map[unix.Signal]bool{unix.SIGTERM: c.daemonTermExit < 0}
	handleSignals(rec, "daemon-", die, 0)
	if c.daemonTermExit >= 0 {
		term := make(chan os.Signal, 1)
		signal.Notify(term, unix.SIGTERM)
		go func() {
			<-term
			// Recorded here too: the recording goroutine may not have
			// written its line yet when this one exits.
			rec.printf("daemon-signal %d %d", int(unix.SIGTERM), time.Now().UnixNano())
			exitWith(rec, c.daemonTermExit)
		}()
	}
	if c.daemonIgnoreTerm {
		// A real SIG_IGN, so only SIGKILL can end the daemon.
		signal.Ignore(unix.SIGTERM)
	}
	pid, pgid, _, sid := ids()
	rec.printf("daemon-start pid=%d pgid=%d sid=%d", pid, pgid, sid)
	notifyReady(c.readyFD)
	if c.daemonListen != "" {
		time.AfterFunc(c.listenAfter, func() { serveHTTP(rec, c.daemonListen) })
	}
	if c.daemonLate > 0 {
		time.Sleep(c.daemonLate)
		if err := writeFileAtomic(c.daemon, fmt.Sprintf("%d\n", pid)); err != nil {
			fatalf(rec, "daemon pidfile: %v", err)
		}
	}
	select {}
}

// runSleeper is a -children process: it records its start and signals and dies on TERM unless told not to.
func runSleeper(c *config, rec *recorder) {
	die := map[unix.Signal]bool{unix.SIGTERM: !c.childIgnoreTerm}
	handleSignals(rec, "child-", die, 0)
	pid, pgid, _, sid := ids()
	rec.printf("child-start pid=%d pgid=%d sid=%d", pid, pgid, sid)
	notifyReady(c.readyFD)
	select {}
}

// runForkloop keeps starting short-lived children until killed, ignoring SIGTERM.
func runForkloop(c *config, rec *recorder) {
	signal.Ignore(unix.SIGTERM)
	pid, pgid, _, sid := ids()
	rec.printf("forkloop-start pid=%d pgid=%d sid=%d", pid, pgid, sid)
	notifyReady(c.readyFD)
	// Reap our own children, or with ~1000 forks a second the zombies would exhaust pids.
	go func() {
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(-1, &ws, 0, nil); err == unix.ECHILD {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	files := devNullFiles()
	sleepBin := findBin("sleep")
	argv := []string{sleepBin, "1"}
	for {
		// Errors (e.g. EAGAIN at a pid limit) are expected under stress; just try again.
		_, _ = syscall.ForkExec(sleepBin, argv, &syscall.ProcAttr{Files: files, Env: os.Environ()})
		time.Sleep(time.Millisecond)
	}
}

// printIdentity prints who the helper runs as: the Uid, Gid, Groups and
// Cap* lines of /proc/self/status, and HOME=value.
func printIdentity() {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Fprintln(os.Stdout, "identity-error", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		for _, k := range []string{"Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:", "CapEff:", "CapAmb:"} {
			if strings.HasPrefix(l, k) {
				fmt.Fprintln(os.Stdout, strings.Join(strings.Fields(l), " "))
			}
		}
	}
	fmt.Fprintf(os.Stdout, "HOME=%s\n", os.Getenv("HOME"))
}

// Command crowd measures what lfinit's own work costs beside a crowd of
// unrelated processes on the host: finding its tree, answering a scrape
// of /metrics, and the hard-deadline kill, with lfinit not PID 1 (its
// /proc is the host's) and 0, 1,000, 10,000 and 30,000 other processes.
// The cost must stay flat in the host's size. It prints a markdown report.
//
//	go run ./bench/crowd                 full run (as root), a few minutes
//	go run ./bench/crowd -quick          smoke run
//	go run ./bench/crowd -o bench/CROWDED.md
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/internal/testkit/crowd"
	"github.com/light-fabric/lfinit/internal/testkit/measure"
	"github.com/light-fabric/lfinit/reaper"
)

func main() {
	quick := flag.Bool("quick", false, "a smoke run with tiny counts")
	out := flag.String("o", "", "write the report to `file` instead of stdout")
	flag.Parse()
	sizes, walks, scrapes, trials := []int{0, 1000, 10000, 30000}, 200, 300, 8
	if *quick {
		sizes, walks, scrapes, trials = []int{0, 1000}, 20, 20, 2
	}
	dir, err := os.MkdirTemp("", "lfinit-crowd-")
	check(err)
	defer os.RemoveAll(dir)
	b := build(dir)
	var rows []row
	for _, n := range sizes {
		rows = append(rows, measureAt(b, n, walks, scrapes, trials))
	}
	w := io.Writer(os.Stdout)
	if *out != "" {
		f, err := os.Create(*out)
		check(err)
		defer f.Close()
		w = f
	}
	report(w, rows, os.Args[1:])
}

// bins are the programs a run needs.
type bins struct{ lfinit, helper, crowd string }

func build(dir string) bins {
	b := bins{filepath.Join(dir, "lfinit"), filepath.Join(dir, "helper"), ""}
	for bin, pkg := range map[string]string{b.lfinit: "./cmd/lfinit", b.helper: "./test/helper"} {
		cmd := exec.Command("go", "build", "-trimpath", "-tags", "nethttpomithttp2", "-ldflags=-s -w", "-o", bin, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fail("go build %s: %v\n%s", pkg, err, out)
		}
	}
	var err error
	b.crowd, err = crowd.Build(dir)
	check(err)
	return b
}

// row is the figures at one host size.
type row struct {
	host                 int
	walk, scan           []time.Duration // finding a tree of 4 below this process
	scrape               []time.Duration // one GET /metrics at a time
	late                 []time.Duration // hard-deadline stop: exit − budget, with 4 scrapers
	crowdDead, leftAlive int
}

func measureAt(b bins, n, walks, scrapes, trials int) row {
	r := row{host: n}
	var c *crowd.Crowd
	if n > 0 {
		var err error
		c, err = crowd.Start(b.crowd, n)
		check(err)
		defer c.Kill()
	}
	r.walk, r.scan = discovery(walks)
	r.scrape = scrapeAlone(b, scrapes)
	for range trials {
		late, left := deadlineStop(b)
		r.late = append(r.late, late)
		r.leftAlive += left
	}
	if c != nil {
		dead, err := c.Stop()
		check(err)
		r.crowdDead = dead
	}
	return r
}

// discovery times reaper.Walk of a tree of three processes below a sh,
// and the full /proc scan lfinit did before (reaper.Tree of reaper.Table).
// The root is the sh, not this process, whose tree holds the crowd.
func discovery(reps int) (walk, scan []time.Duration) {
	cmd := exec.Command("sh", "-c", "sleep 600 & sh -c 'sleep 600; :' & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	check(cmd.Start())
	defer func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }()
	root := cmd.Process.Pid
	for deadline := time.Now().Add(5 * time.Second); len(reaper.Walk(root)) < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			fail("the tree of three did not start")
		}
	}
	for i := range reps {
		t0 := time.Now()
		reaper.Walk(root)
		walk = append(walk, time.Since(t0))
		if i%10 == 0 { // the scan is slow on a crowded host: a tenth as often
			t0 = time.Now()
			reaper.Tree(reaper.Table(), root)
			scan = append(scan, time.Since(t0))
		}
	}
	return walk, scan
}

// lfinitRun is one lfinit (not PID 1) serving metrics.
type lfinitRun struct {
	cmd   *exec.Cmd
	pidfd int
	addr  string
}

// startLfinit starts lfinit with args before "--" and the helper's args after.
func startLfinit(b bins, dir string, args []string, helperArgs ...string) *lfinitRun {
	argv := append(append(append([]string{}, args...), "--metrics-addr=127.0.0.1:0", "--", b.helper), helperArgs...)
	cmd := exec.Command(b.lfinit, argv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	check(err)
	check(cmd.Start())
	fd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	check(err)
	r := &lfinitRun{cmd: cmd, pidfd: fd}
	re := regexp.MustCompile(`serving metrics and probes.* addr=(\S+)`)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			r.addr = m[1]
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	if r.addr == "" {
		fail("lfinit did not say where it serves metrics")
	}
	return r
}

// end stops lfinit with TERM, so that it ends its own tree, and kills it
// only if it has not exited by then.
func (r *lfinitRun) end() {
	unix.PidfdSendSignal(r.pidfd, syscall.SIGTERM, nil, 0)
	if measure.WaitPidfd(r.pidfd, 10*time.Second) != nil {
		syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	}
	r.cmd.Wait()
	unix.Close(r.pidfd)
}

// scrapeAlone times n scrapes of /metrics, one at a time.
func scrapeAlone(b bins, n int) []time.Duration {
	dir, err := os.MkdirTemp("", "lfinit-crowd-run-")
	check(err)
	defer os.RemoveAll(dir)
	r := startLfinit(b, dir, []string{"--grace=1s"}, "-children", "3")
	defer r.end()
	url := "http://" + r.addr + "/metrics"
	measure.Status(url) // the first answer builds what the rest reuse
	var took []time.Duration
	for range n {
		t0 := time.Now()
		if measure.Status(url) != 200 {
			fail("a scrape failed")
		}
		took = append(took, time.Since(t0))
	}
	return took
}

// The deadline trial's budget: --grace=200ms --floor=100ms.
const budget = 300 * time.Millisecond

// deadlineStop stops a child that ignores TERM, with a daemon of its own
// that does too, while four clients scrape; it returns how late lfinit
// exited after its budget and how many of the two outlived it.
func deadlineStop(b bins) (late time.Duration, left int) {
	dir, err := os.MkdirTemp("", "lfinit-crowd-run-")
	check(err)
	defer os.RemoveAll(dir)
	r := startLfinit(b, dir, []string{"--grace=200ms", "--floor=100ms"},
		"-die-on", "", "-daemon", "daemon.pid", "-daemon-ignore-term", "-ready-file", "ready", "-pidfile", "child.pid")
	defer r.end()
	for deadline := time.Now().Add(10 * time.Second); !exists(filepath.Join(dir, "ready")); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			fail("the helper never got ready")
		}
	}
	stop := measure.Scrape("http://"+r.addr+"/metrics", 4)
	defer stop()
	time.Sleep(50 * time.Millisecond) // the scrapers get going
	sent := time.Now()
	check(unix.PidfdSendSignal(r.pidfd, syscall.SIGTERM, nil, 0))
	check(measure.WaitPidfd(r.pidfd, 10*time.Second))
	late = time.Since(sent) - budget
	for _, f := range []string{"daemon.pid", "child.pid"} {
		if pid := readPid(filepath.Join(dir, f)); pid > 0 && syscall.Kill(pid, 0) == nil && !zombie(pid) {
			left++
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return late, left
}

func report(w io.Writer, rows []row, args []string) {
	cmd := "go run ./bench/crowd"
	if len(args) > 0 {
		cmd += " " + strings.Join(args, " ")
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(w, "## lfinit's own work beside a crowd of unrelated processes\n\n")
	fmt.Fprintf(w, "Command: `%s` (as root). Machine: %d CPUs, %s, %s; load average %s at the end. %s.\n\n",
		cmd, runtime.NumCPU(), kernel(), runtime.Version(), strings.Join(strings.Fields(string(load))[:3], " "), time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(w, "lfinit is not PID 1: its /proc is the host's, which also holds the crowd (`internal/testkit/crowd`: processes that only pause(), none in lfinit's tree). "+
		"Tree walk: `reaper.Walk`, lfinit's way to find its tree (each process's children lists), for a tree of three; /proc scan: reading every process's stat, the way before. "+
		"Scrape: one GET /metrics at a time (lfinit with a child and three grandchildren). Deadline: `--grace=200ms --floor=100ms`, a child and its setsid daemon both ignoring TERM, four clients scraping without pause, "+
		"SIGTERM to lfinit → lfinit has exited (its pidfd), minus the 300 ms budget. "+
		"The deadline figures also hold what the host itself does in proportion to its process count: on the machine of this report, "+
		"`top` beside 30,000 processes showed the kernel's memory monitor (kdamond) and the sandbox's own process monitor busy, which lfinit shares two cores with; "+
		"the tree walk and the scrape, lfinit's own work, stay flat.\n\n")
	fmt.Fprintf(w, "| host processes (crowd) | tree walk p50 | /proc scan p50 | scrape p50 | scrape p99 | deadline stop late, p50 | late, max | left running | crowd touched |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %d | %d |\n", r.host, q(r.walk, 50), q(r.scan, 50), q(r.scrape, 50), q(r.scrape, 99), q(r.late, 50), q(r.late, 100), r.leftAlive, r.crowdDead)
	}
}

// q is the p-th percentile of d, formatted.
func q(d []time.Duration, p int) string {
	if len(d) == 0 {
		return "—"
	}
	s := slices.Clone(d)
	slices.Sort(s)
	v := s[min(len(s)-1, len(s)*p/100)]
	if v < time.Millisecond && v > -time.Millisecond {
		return fmt.Sprintf("%.1f µs", float64(v)/1e3)
	}
	return fmt.Sprintf("%.2f ms", float64(v)/1e6)
}

func kernel() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "Linux"
	}
	return "Linux " + unix.ByteSliceToString(u.Release[:])
}

func readPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var pid int
	fmt.Sscanf(strings.TrimSpace(string(b)), "%d", &pid)
	return pid
}

func zombie(pid int) bool {
	p, ok := reaper.Read(pid)
	return !ok || p.Exited()
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "crowd: "+format+"\n", args...)
	os.Exit(1)
}

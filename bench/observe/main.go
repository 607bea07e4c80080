// Command observe measures two promises of lfinit's observability, on the
// built binary, with real signals and real HTTP on loopback:
//
//   - readiness flip: from kill(SIGTERM) to the first 503 from /readyz;
//   - deadline accuracy with metrics on: how late after the hard deadline
//     (as lfinit published it in its status file) a child that ignores
//     SIGTERM is dead, seen through a pidfd, while /metrics is scraped in
//     a tight loop.
//
// Usage: go run ./bench/observe [-flips 200] [-deadlines 30] [-scrapers 4] [-slow 500]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
)

func main() {
	flips := flag.Int("flips", 200, "readiness-flip runs")
	deadlines := flag.Int("deadlines", 30, "deadline-accuracy runs")
	scrapers := flag.Int("scrapers", 4, "goroutines scraping /metrics during the deadline runs")
	slow := flag.Int("slow", 0, "connections held open on the metrics port during the deadline runs, half of them sending headers that never end")
	flag.Parse()

	dir, err := os.MkdirTemp("", "lfinit-bench-")
	check(err)
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "lfinit")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/lfinit").CombinedOutput()
	if err != nil {
		fail("go build ./cmd/lfinit (run from the repository root): %v\n%s", err, out)
	}

	var flipLat []time.Duration
	for range *flips {
		flipLat = append(flipLat, readyFlip(bin))
	}
	var late []time.Duration
	for range *deadlines {
		late = append(late, deadlineLateness(bin, dir, *scrapers, *slow))
	}
	fmt.Printf("| measurement | runs | p50 | p90 | p99 | max |\n|---|---|---|---|---|---|\n")
	row("SIGTERM → /readyz 503", flipLat)
	row(fmt.Sprintf("hard deadline → child dead, metrics on, %d scrapers, %d held connections", *scrapers, *slow), late)
}

// lfinitProc is one lfinit started for a measurement.
type lfinitProc struct {
	cmd  *exec.Cmd
	addr string
}

var addrRE = regexp.MustCompile(`serving metrics and probes.* addr=(\S+)`)

// start runs lfinit with args and waits for its metrics address.
func start(bin string, args ...string) *lfinitProc {
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	check(err)
	check(cmd.Start())
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			if m := addrRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
				addr <- m[1]
				sent = true
			}
		}
	}()
	select {
	case a := <-addr:
		return &lfinitProc{cmd: cmd, addr: a}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		fail("lfinit did not report its metrics address")
	}
	return nil
}

// readyFlip measures kill(SIGTERM) → first 503 (an upper bound: the time
// the 503 response arrived).
func readyFlip(bin string) time.Duration {
	p := start(bin, "--metrics-addr", "127.0.0.1:0", "--drain-delay", "2s", "--grace", "5s", "--", "sleep", "60")
	url := "http://" + p.addr + "/readyz"
	for deadline := time.Now().Add(5 * time.Second); measure.Status(url) != 200; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			fail("lfinit never became ready")
		}
	}
	sent := time.Now()
	check(p.cmd.Process.Signal(syscall.SIGTERM))
	var lat time.Duration
	for {
		if measure.Status(url) == 503 {
			lat = time.Since(sent)
			break
		}
		if time.Since(sent) > 5*time.Second {
			fail("/readyz never said 503")
		}
	}
	// A second SIGTERM forwards the stop signal at once: sleep dies, lfinit exits.
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
	return lat
}

// deadlineLateness measures how late after the hard deadline lfinit
// published in its status file the child (which ignores SIGTERM) is dead,
// seen through a pidfd.
func deadlineLateness(bin, dir string, scrapers, slow int) time.Duration {
	const grace, floor = 300 * time.Millisecond, 100 * time.Millisecond
	statusPath := filepath.Join(dir, "status.json")
	p := start(bin, "--metrics-addr", "127.0.0.1:0", "--status-file", statusPath, "--grace", grace.String(), "--floor", floor.String(),
		"--", "sh", "-c", `trap "" TERM; sleep 60 & wait`)
	child := waitChild(p.cmd.Process.Pid)
	pidfd, err := unix.PidfdOpen(child, 0)
	check(err)
	defer unix.Close(pidfd)

	for i := range slow {
		c, err := net.Dial("tcp", p.addr)
		check(err)
		defer c.Close()
		if i%2 == 0 {
			c.Write([]byte("GET /metrics HTTP/1.1\r\nHost: x\r\n"))
		}
	}
	stopScraping := measure.Scrape("http://"+p.addr+"/metrics", scrapers)
	time.Sleep(50 * time.Millisecond) // let the scrapers get going
	check(p.cmd.Process.Signal(syscall.SIGTERM))
	if err := measure.WaitPidfd(pidfd, 5*time.Second); err != nil {
		fail("the child outlived the hard deadline: %v", err)
	}
	dead := time.Now()
	stopScraping()
	p.cmd.Wait()
	var st struct {
		HardDeadline *time.Time `json:"hard_deadline"`
	}
	b, err := os.ReadFile(statusPath)
	check(err)
	check(json.Unmarshal(b, &st))
	if st.HardDeadline == nil {
		fail("no hard_deadline in the status file")
	}
	return dead.Sub(*st.HardDeadline)
}

// waitChild returns the first child of ppid, once it has exec'd sh.
// Children are listed per thread, under the thread that forked them.
func waitChild(ppid int) int {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", ppid))
		var kids []string
		for _, f := range files {
			b, _ := os.ReadFile(f)
			kids = append(kids, strings.Fields(string(b))...)
		}
		if f := kids; len(f) > 0 {
			pid, _ := strconv.Atoi(f[0])
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			if strings.TrimSpace(string(comm)) == "sh" {
				return pid
			}
		}
	}
	fail("lfinit's child did not start")
	return 0
}

func row(name string, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	q := func(p float64) string { return fmtDur(d[min(len(d)-1, int(p*float64(len(d))))]) }
	fmt.Printf("| %s | %d | %s | %s | %s | %s |\n", name, len(d), q(0.5), q(0.9), q(0.99), fmtDur(d[len(d)-1]))
}

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "observe: "+format+"\n", a...)
	os.Exit(1)
}

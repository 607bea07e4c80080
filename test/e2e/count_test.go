package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/memdir"
)

// The kill's counts are exact in every run, not in most: these tests run
// the same stop many times, several at once (each run loads the others),
// as PID 1 and as a subreaper, and want the same counts from each.

// TestKillCountsAreExact: bash ignores TERM and waits for its foreground
// sleep; at the hard deadline both are killed, and the exit line says
// killed=2 reaped=2 in every run. Killing bash before its children were
// read used to miss the sleep (re-parented to lfinit meanwhile), and a
// bash killed after its sleep could reap it first, hiding it from lfinit.
func TestKillCountsAreExact(t *testing.T) {
	long(t)
	t.Parallel()
	needRoot(t)
	script := `trap '' TERM; sleep 1000; echo unreachable`
	for _, pid1 := range []bool{true, false} {
		outs := stopMany(t, pid1, 100, 8, script, func(p []int) bool { return countComm(p, "sleep") == 1 })
		tally, odd := map[string]int{}, ""
		const want = "exit=1 killed=2 reaped=2"
		for _, o := range outs {
			got := fmt.Sprintf("exit=%d killed=%d reaped=%d", o.code, o.killed, o.reaped)
			if tally[got]++; got != want && odd == "" {
				odd = o.log
			}
		}
		if tally[want] != len(outs) {
			t.Errorf("pid1=%v: %d runs, want every one %q; got %v; the first other:\n%s", pid1, len(outs), want, sorted(tally), odd)
		}
	}
}

// TestKillCountsAreExactWhileTheTreeForks: two shells, one below the
// other, fork sleepers one after the other (up to 400 each), so forks are
// in flight when the kill comes. No process of the tree exits on its own or reaps
// another, so every process lfinit killed is one it reaps, and the exit
// line's killed equals its reaped in every run.
func TestKillCountsAreExactWhileTheTreeForks(t *testing.T) {
	long(t)
	t.Parallel()
	needRoot(t)
	// read -t on a FIFO nobody writes paces the loop without a process
	// that would exit on its own.
	script := `trap '' TERM; mkfifo "$0/pace"; exec 9<>"$0/pace"
grow() { for ((i = 0; i < 400; i++)); do sleep 1000 & read -t 0.005 -u 9; done; wait; }
grow & grow`
	for _, pid1 := range []bool{true, false} {
		outs := stopMany(t, pid1, 12, 2, script, func(p []int) bool { return countComm(p, "sleep") >= 10 })
		for i, o := range outs {
			if o.code != 1 || o.killed != o.reaped || o.killed < 10 {
				t.Errorf("pid1=%v run %d: exit=%d killed=%d reaped=%d, want exit 1 and killed=reaped (at least 10)\n%s",
					pid1, i, o.code, o.killed, o.reaped, o.log)
			}
		}
	}
}

// stopOutcome is what one run's exit line said.
type stopOutcome struct {
	code, killed, reaped int
	log                  string
}

// stopMany runs lfinit with a 300ms grace and a 100ms floor around
// `bash -c script DIR` n times, at most par at once, sends each SIGTERM
// once running(descendants) holds, and returns what each exit line said.
func stopMany(t *testing.T, pid1 bool, n, par int, script string, running func([]int) bool) []stopOutcome {
	t.Helper()
	outs := make([]stopOutcome, n)
	errs := make([]error, n)
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := range n {
		dir := memdir.New(t)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			outs[i], errs[i] = stopOnce(dir, pid1, script, running)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("pid1=%v run %d: %v", pid1, i, err)
		}
	}
	return outs
}

// stopOnce is one run of stopMany in dir.
func stopOnce(dir string, pid1 bool, script string, running func([]int) bool) (stopOutcome, error) {
	args := []string{lfinitBin, "--log-level=debug", "--grace=300ms", "--floor=100ms", "--", "/bin/bash", "-c", script, dir}
	if pid1 {
		args = append([]string{"unshare", "--pid", "--fork", "--mount-proc"}, args...)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return stopOutcome{}, err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	cleanup := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	lfinit := cmd.Process.Pid
	if pid1 {
		lfinit = 0
	}
	// Events, not a schedule: wait until the tree runs as the test needs.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Millisecond) {
		if lfinit == 0 {
			if kids := childrenOf(cmd.Process.Pid); len(kids) > 0 {
				lfinit = kids[0]
			}
		}
		if lfinit > 0 && running(treeBelow(lfinit)) {
			break
		}
		select {
		case <-done:
			return stopOutcome{}, fmt.Errorf("lfinit exited before the tree ran:\n%s", stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			cleanup()
			return stopOutcome{}, fmt.Errorf("the tree did not start in a minute:\n%s", stderr.String())
		}
	}
	syscall.Kill(lfinit, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(time.Minute):
		cleanup()
		return stopOutcome{}, fmt.Errorf("lfinit did not exit within a minute of SIGTERM:\n%s", stderr.String())
	}
	log := stderr.String()
	o := stopOutcome{code: cmd.ProcessState.ExitCode(), log: log}
	var err error
	if o.killed, err = exitField(log, "killed"); err == nil {
		o.reaped, err = exitField(log, "reaped")
	}
	return o, err
}

// exitField is the integer key= of the exit line in log.
func exitField(log, key string) (int, error) {
	i := strings.LastIndex(log, "msg=exit")
	if i < 0 {
		return 0, fmt.Errorf("no exit line in log:\n%s", log)
	}
	for _, f := range strings.Fields(log[i:]) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, fmt.Errorf("no %s= in the exit line:\n%s", key, log[i:])
}

// treeBelow lists pid's descendants through the kernel's children lists,
// at the cost of the tree, not of every process on the machine.
func treeBelow(pid int) []int {
	var out []int
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(queue[0]), "task", "*", "children"))
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			for _, field := range strings.Fields(string(b)) {
				if kid, err := strconv.Atoi(field); err == nil {
					out, queue = append(out, kid), append(queue, kid)
				}
			}
		}
	}
	return out
}

// countComm counts the processes of pids whose command name is comm.
func countComm(pids []int, comm string) int {
	n := 0
	for _, pid := range pids {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
		if err == nil && strings.TrimSpace(string(b)) == comm {
			n++
		}
	}
	return n
}

// sorted is a tally as "text: count" lines, in the order of the texts.
func sorted(tally map[string]int) []string {
	var out []string
	for k, v := range tally {
		out = append(out, fmt.Sprintf("%s: %d", k, v))
	}
	sort.Strings(out)
	return out
}

package supervisor

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/budget"
	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/reaper"
	"github.com/light-fabric/lfinit/statusfile"
)

// fakeTree answers the runner's tree signals from a script, one round per
// call, and remembers what it was asked.
type fakeTree struct {
	rounds []reaper.Signalled
	groups []int
	sigs   []syscall.Signal
}

func (f *fakeTree) signal(pid1 bool, sig syscall.Signal, group int) reaper.Signalled {
	f.groups, f.sigs = append(f.groups, group), append(f.sigs, sig)
	if len(f.rounds) == 0 {
		return reaper.Signalled{}
	}
	r := f.rounds[0]
	f.rounds = f.rounds[1:]
	return r
}

func (f *fakeTree) kill(pid1 bool, group int, hold bool) reaper.Signalled {
	return f.signal(pid1, syscall.SIGKILL, group)
}

// testRunner is a runner over a fake tree whose child (pid 100) runs,
// logging at level into log; nothing of it touches a real process.
func testRunner(tree *fakeTree, level slog.Level, log *bytes.Buffer) *runner {
	now := time.Now()
	c := Config{Options: core.Options{Budget: budget.Default()}, Log: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: level}))}
	r := newRunner(c, now)
	r.self, r.child = 1, 100
	r.tree.send, r.tree.kill = tree.signal, tree.kill
	r.m.Started(now, true)
	return r
}

func procs(pids ...int) []reaper.Proc {
	var out []reaper.Proc
	for _, pid := range pids {
		out = append(out, reaper.Proc{Pid: pid, Start: uint64(pid) * 10, Comm: "p"})
	}
	return out
}

// TestKillCountsEachProcessOnce: the hard deadline's kill rounds reach the
// child's group while the child lives, count a process once however many
// rounds hit it (state and name may change between rounds), warn of the
// first round only and of each unsignalled process once, and the final
// status says all of it.
func TestKillCountsEachProcessOnce(t *testing.T) {
	denied := reaper.Failure{Proc: reaper.Proc{Pid: 7, Comm: "stuck"}, Err: errors.New("operation not permitted")}
	again := procs(100, 101)
	again[1].State, again[1].Comm = 'Z', "renamed"
	tree := &fakeTree{rounds: []reaper.Signalled{
		{Hit: procs(100, 101), Failed: []reaper.Failure{denied}},
		{Hit: append(again, procs(102)...), Failed: []reaper.Failure{denied}},
		{Hit: procs(102)},
	}}
	var log bytes.Buffer
	r := testRunner(tree, slog.LevelInfo, &log)
	for range 2 {
		r.kill(syscall.SIGKILL)
	}
	r.reaped = true
	r.kill(syscall.SIGKILL)

	if want := []int{100, 100, 0}; !slices.Equal(tree.groups, want) {
		t.Errorf("groups %v, want %v: the child's group while it lives, none once reaped", tree.groups, want)
	}
	if len(r.tree.killed) != 3 {
		t.Errorf("killed %d processes, want 3 (100, 101, 102 once each)", len(r.tree.killed))
	}
	out := log.String()
	if n := strings.Count(out, "hard deadline: killed the process tree"); n != 1 || !strings.Contains(out, "killed=2") {
		t.Errorf("want one WARN of the first round, killed=2:\n%s", out)
	}
	if n := strings.Count(out, "cannot signal a process"); n != 1 || !strings.Contains(out, "target_pid=7") {
		t.Errorf("want one warning of pid 7:\n%s", out)
	}
	if strings.Contains(out, "killed more") {
		t.Errorf("a later round logged at INFO:\n%s", out)
	}
	s := r.snapshot()
	if s.Killed != 3 || s.NotSignalled != 1 || len(s.StillRunning) != 3 {
		t.Errorf("status: killed %d, not_signalled %d, still_running %v", s.Killed, s.NotSignalled, s.StillRunning)
	}
}

// TestKillOfNothingIsNotAWarning: a hard deadline that finds nothing to
// kill logs no WARN, and the summary's level is not raised by it.
func TestKillOfNothingIsNotAWarning(t *testing.T) {
	var log bytes.Buffer
	r := testRunner(&fakeTree{}, slog.LevelDebug, &log)
	r.kill(syscall.SIGKILL)
	out := log.String()
	if strings.Contains(out, "level=WARN") || !strings.Contains(out, "nothing of the tree was left to kill") {
		t.Errorf("log:\n%s", out)
	}
	if len(r.tree.killed) != 0 || !r.status.unpublished {
		t.Errorf("killed %d, dirty %v: want none, and a status to publish", len(r.tree.killed), r.status.unpublished)
	}
}

// TestResultIsTheFinalStatus: once the machine says exit, the runner's
// result carries the exit code, the stopped status, the signal's time and
// the leftovers. The child is marked reaped first, so that no real
// process is sent the forwards.
func TestResultIsTheFinalStatus(t *testing.T) {
	var log bytes.Buffer
	tree := &fakeTree{rounds: []reaper.Signalled{{Hit: procs(103)}}}
	r := testRunner(tree, slog.LevelInfo, &log)
	now := time.Now()
	r.reaped = true
	if r.apply(r.m.Signal(now, syscall.SIGTERM)) {
		t.Fatal("exit on the shutdown signal")
	}
	if r.apply(r.m.ChildExited(now, 143, false)) {
		t.Fatal("exit with leftovers still running")
	}
	if !r.apply(r.m.TreeEmpty(now)) {
		t.Fatal("no exit once the tree is empty")
	}
	res := r.result()
	if res.Code != 143 || res.Status.Phase != statusfile.Stopped || res.Status.ExitCode == nil || *res.Status.ExitCode != 143 {
		t.Errorf("result code %d, phase %s", res.Code, res.Status.Phase)
	}
	if !res.SignalAt.Equal(now) || res.Leftovers != 1 {
		t.Errorf("result signal_at %v, leftovers %d: want %v and 1 leftover", res.SignalAt, res.Leftovers, now)
	}
	if want := []syscall.Signal{syscall.SIGTERM}; len(tree.sigs) != 1 || tree.sigs[0] != want[0] {
		t.Errorf("tree signals %v, want %v (the leftovers' SIGTERM)", tree.sigs, want)
	}
}

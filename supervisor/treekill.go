package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"syscall"
	"time"

	"github.com/light-fabric/lfinit/forward"
	"github.com/light-fabric/lfinit/internal/logline"
	"github.com/light-fabric/lfinit/reaper"
	"github.com/light-fabric/lfinit/statusfile"
)

// kill is one round of the hard deadline's kill (treeKill.round): the
// child's group first while the child is not reaped.
func (r *runner) kill(sig syscall.Signal) {
	group := 0
	if !r.reaped {
		group = r.child
	}
	r.news(r.tree.round(sig, group, !r.reaped, r.m.KillGiveUp()))
}

// treeKill signals lfinit's whole tree and counts, once each, what it reached.
type treeKill struct {
	// send signals the tree (reaper.SignalTree) and kill kills it
	// (reaper.KillTree); tests put a fake tree in their place.
	send func(pid1 bool, sig syscall.Signal, group int) reaper.Signalled
	kill func(pid1 bool, group int, hold bool) reaper.Signalled
	pid1 bool
	log  *slog.Logger
	// killedSet is nil until the hard deadline's first round: from then on
	// a stopped child is lfinit's doing, not the user's.
	killedSet  map[reaper.Proc]bool
	killed     []reaper.Proc // every process SIGKILLed, once each
	start      time.Time     // the first round of the hard deadline's kill
	leftovers  int           // processes the child left behind that got SIGTERM
	unsignaled map[int]bool  // processes a signal could not reach, reported once each
	method     string        // how the tree is found (statusfile.Status.TreeMethod)
}

// killing reports whether the hard deadline's kill has begun.
func (t *treeKill) killing() bool { return t.killedSet != nil }

// terminate sends sig (SIGTERM) to the child's leftovers; true when the
// status has news.
func (t *treeKill) terminate(sig syscall.Signal) bool {
	res := t.send(t.pid1, sig, 0)
	t.leftovers += len(res.Hit)
	news := t.warnUnsignalled(res.Failed, sig)
	t.log.Debug("terminating leftovers of the child", "signal", "SIGTERM", "leftovers", len(res.Hit))
	return news
}

// signal delivers a forward to every process of the tree: reached is false
// when nothing was left to signal, news true when the status has news.
func (t *treeKill) signal(sig syscall.Signal) (reached, news bool) {
	res := t.send(t.pid1, sig, 0)
	news = t.warnUnsignalled(res.Failed, sig)
	return len(res.Hit) > 0, news
}

// round sends sig (SIGKILL) to the whole tree, stopped first so that the
// count is exact (reaper.KillTree), group first (the child's, while it is
// not reaped: the cheapest, surest reach). The machine repeats it until
// the tree is empty; the first round is logged at WARN, later ones only at
// debug, and killed counts each process once. True when the status has news.
func (t *treeKill) round(sig syscall.Signal, group int, childAlive bool, giveUp time.Duration) bool {
	first := t.killedSet == nil
	if first {
		t.killedSet = map[reaper.Proc]bool{}
		t.start = time.Now()
	}
	// Children of a process that has not stopped yet are held back (it
	// could reap them before it dies) for half the time lfinit waits for
	// the tree; then they are killed whatever their parent does.
	hold := time.Since(t.start) < giveUp/2
	begun := time.Now()
	res := t.kill(t.pid1, group, hold)
	took := time.Since(begun)
	if res.Unsettled > 0 && t.logsAt(slog.LevelDebug) {
		t.logLine(slog.LevelDebug, "hard deadline: part of the tree had not stopped yet; its children wait for the next round",
			"running", res.Unsettled, "held", res.Held)
	}
	fresh := t.addKilled(res.Hit)
	news := t.warnUnsignalled(res.Failed, sig)
	switch {
	case first && len(fresh) == 0:
		if t.logsAt(slog.LevelDebug) {
			t.logLine(slog.LevelDebug, "hard deadline: nothing of the tree was left to kill", "child_alive", childAlive)
		}
	case first:
		t.logLine(slog.LevelWarn, "hard deadline: killed the process tree", "signal", forward.Name(sig), "killed", len(fresh),
			"child_alive", childAlive, "still_running", names(fresh, 10), "round_seconds", seconds(took))
	case len(fresh) > 0:
		if t.logsAt(slog.LevelDebug) {
			t.logLine(slog.LevelDebug, "hard deadline: killed more of the tree", "killed", len(fresh), "still_running", names(fresh, 10))
		}
	}
	return news || first || len(fresh) > 0
}

// addKilled records the processes of hit not already killed, and returns them.
func (t *treeKill) addKilled(hit []reaper.Proc) []reaper.Proc {
	if t.killedSet == nil {
		t.killedSet = make(map[reaper.Proc]bool, len(hit))
	}
	var fresh []reaper.Proc
	for _, p := range hit {
		id := reaper.Proc{Pid: p.Pid, Start: p.Start} // state and name may change between rounds
		if !t.killedSet[id] {
			t.killedSet[id] = true
			fresh = append(fresh, p)
		}
	}
	t.killed = append(t.killed, fresh...)
	return fresh
}

// warnUnsignalled warns, once per process, of those a signal could not
// reach: the tree is then not what lfinit promises, and the final records
// say so. True when one was new.
func (t *treeKill) warnUnsignalled(failed []reaper.Failure, sig syscall.Signal) bool {
	news := false
	for _, f := range failed {
		if t.unsignaled[f.Pid] {
			continue
		}
		if t.unsignaled == nil {
			t.unsignaled = map[int]bool{}
		}
		t.unsignaled[f.Pid], news = true, true
		t.logLine(slog.LevelWarn, "cannot signal a process of lfinit's tree; it may outlive lfinit", "signal", forward.Name(sig),
			"target_pid", f.Pid, "cmd", f.Comm, "err", f.Err)
	}
	return news
}

// publish adds the tree's counts to s.
func (t *treeKill) publish(s *statusfile.Status) {
	s.Killed = len(t.killed)
	// Not signalled: counted once each, whichever signal missed.
	s.NotSignalled = len(t.unsignaled)
	s.TreeMethod = t.method
	if len(t.killed) > 0 {
		s.StillRunning = names(t.killed, 50)
	}
}

// logsAt reports whether a line at level would be written (runner.logsAt).
func (t *treeKill) logsAt(level slog.Level) bool {
	return t.log.Enabled(context.Background(), level)
}

// logLine writes one log line at level without looking up its caller (logline.Write).
func (t *treeKill) logLine(level slog.Level, msg string, attrs ...any) {
	logline.Write(t.log, level, msg, attrs...)
}

// names lists processes as name[pid], at most limit of them.
func names(procs []reaper.Proc, limit int) []string {
	var out []string
	for i, p := range procs {
		if i == limit {
			out = append(out, fmt.Sprintf("and %d more", len(procs)-limit))
			break
		}
		out = append(out, fmt.Sprintf("%s[%d]", p.Comm, p.Pid))
	}
	return out
}

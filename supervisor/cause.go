package supervisor

import (
	"log/slog"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/memcg"
	"github.com/light-fabric/lfinit/reaper"
	"github.com/light-fabric/lfinit/statusfile"
)

// CauseOf says why the main process ended with ws: by itself, by lfinit's
// SIGKILL (lfinitKilled), or by a SIGKILL from elsewhere, which oom tells
// apart (asked only then): the kernel's OOM killer, someone else, or, when
// the counter cannot be read, unknown.
func CauseOf(ws unix.WaitStatus, lfinitKilled bool, oom func() (killed, known bool)) statusfile.Cause {
	switch {
	case !ws.Signaled() || ws.Signal() != syscall.SIGKILL:
		return statusfile.CauseExited
	case lfinitKilled:
		return statusfile.CauseDeadline
	}
	switch killed, known := oom(); {
	case !known:
		return statusfile.CauseUnknown
	case killed:
		return statusfile.CauseOOMKill
	}
	return statusfile.CauseKilledFromOutside
}

// ending is how the main process ended, for the final records.
type ending struct {
	cause  statusfile.Cause // "" until it ended
	usage  reaper.Usage     // from its exit status
	ru     unix.Rusage      // filled by the reap that collects it
	memory memoryWatch
}

// memoryWatch reads the memory cgroup when the child starts and again
// when it died of a SIGKILL lfinit did not send: the OOM kill counter,
// limit and peak. Nothing is read on the signal path.
type memoryWatch struct {
	based         chan struct{} // closed once group and before are read
	group         memcg.Group
	before, after memcg.Reading
	read          bool // after was read
}

// start finds lfinit's memory cgroup and reads its counter's base, on a
// goroutine of its own while the child starts: the reads (a dozen system
// calls) then delay neither the child's start nor the exit of a child
// that is done at once.
func (w *memoryWatch) start() {
	w.based = make(chan struct{})
	go func() {
		defer close(w.based)
		w.group, _ = memcg.Find() // a group not found reads as unknown
		w.before = w.group.Read()
	}()
}

// oomKilled reads the counter again and says whether it grew since start.
func (w *memoryWatch) oomKilled(log *slog.Logger) (killed, known bool) {
	if w.based != nil {
		<-w.based
	}
	w.after, w.read = w.group.Read(), true
	killed, known = memcg.OOMKilled(w.before, w.after)
	if !known {
		log.Warn("the child was SIGKILLed by someone other than lfinit, and no OOM kill counter can be read to say whether it was the kernel's OOM killer",
			"cgroup", w.group.Dir())
	}
	return killed, known
}

// publish puts the memory cgroup's limit and peak in s, once read.
func (w *memoryWatch) publish(s *statusfile.Status) {
	if !w.read {
		return
	}
	if w.after.HasLimit && !w.after.Unlimited {
		s.MemoryLimitBytes = &w.after.Limit
	}
	if w.after.HasPeak {
		s.MemoryPeakBytes = &w.after.Peak
	}
}

// publish puts the cause and the child's cost in s, once it ended.
func (e *ending) publish(s *statusfile.Status) {
	if e.cause == "" {
		return
	}
	cause, u := e.cause, e.usage
	user, sys := u.User.Seconds(), u.System.Seconds()
	s.Cause, s.ChildPeakRSSBytes, s.ChildUserSeconds, s.ChildSystemSeconds = &cause, &u.PeakRSS, &user, &sys
	e.memory.publish(s)
}

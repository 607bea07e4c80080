package statusfile

import (
	"os"
	"sync"

	"github.com/light-fabric/lfinit/reaper"
)

// owner identifies the writing process for readers: its PID namespace and
// its start time in clock ticks since boot. With the pid, that is an
// identity a recycled pid cannot fake, and it needs no clock comparison.
type owner struct {
	ns    string
	start uint64
}

var self = sync.OnceValue(func() owner {
	o := owner{}
	o.ns, _ = os.Readlink("/proc/self/ns/pid")
	o.start, _ = startTicks("/proc", os.Getpid())
	return o
})

// stampOwner records this process as the writer of s.
func (s *Status) stampOwner() {
	o := self()
	if o.ns != "" {
		s.PidNamespace = &o.ns
	}
	if o.start != 0 {
		s.PidStartTicks = &o.start
	}
}

// startTicks is when pid started, in clock ticks since boot, as the /proc
// at dir shows it; false when it is gone or a zombie (it has exited).
func startTicks(dir string, pid int) (uint64, bool) {
	p, ok := reaper.ReadIn(dir, pid)
	if !ok || p.Exited() {
		return 0, false
	}
	return p.Start, true
}

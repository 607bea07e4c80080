package statusfile

import (
	"os"
	"testing"

	"github.com/light-fabric/lfinit/reaper"
)

// TestStartTicks: a process's start comes from reaper's parser of
// /proc/PID/stat, and a pid that is gone has none.
func TestStartTicks(t *testing.T) {
	n, ok := startTicks("/proc", os.Getpid())
	if p, _ := reaper.Read(os.Getpid()); !ok || n != p.Start || n == 0 {
		t.Errorf("startTicks = %d, %v; want %d", n, ok, p.Start)
	}
	if _, ok := startTicks(t.TempDir(), 1); ok {
		t.Error("a pid absent from the /proc given has a start")
	}
}

// TestStampOwner: the writer records its PID namespace and start time,
// the identity readers check it by (report.WriterState).
func TestStampOwner(t *testing.T) {
	var s Status
	s.stampOwner()
	p, _ := reaper.Read(os.Getpid())
	if s.PidNamespace == nil || s.PidStartTicks == nil || *s.PidStartTicks != p.Start {
		t.Fatalf("stampOwner recorded %v, %v; want this process's namespace and start %d", s.PidNamespace, s.PidStartTicks, p.Start)
	}
}

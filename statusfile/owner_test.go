package statusfile

import (
	"os"
	"os/exec"
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

// TestWriterState checks the three answers against real processes: this
// test's own (alive), an exited one (gone), and a pid recycled by another
// process (the start time differs: gone).
func TestWriterState(t *testing.T) {
	var s Status
	s.Pid = os.Getpid()
	s.stampOwner()
	if s.PidNamespace == nil || s.PidStartTicks == nil {
		t.Fatal("stampOwner recorded nothing")
	}
	if got := WriterState(s, "/proc"); got != WriterAlive {
		t.Errorf("own process: %v, want alive", got)
	}

	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := s
	gone.Pid = cmd.Process.Pid
	if got := WriterState(gone, "/proc"); got != WriterGone {
		t.Errorf("exited process: %v, want gone", got)
	}

	recycled := s
	other := *s.PidStartTicks + 1
	recycled.PidStartTicks = &other
	if got := WriterState(recycled, "/proc"); got != WriterGone {
		t.Errorf("same pid, another start time: %v, want gone", got)
	}

	// From another PID namespace the process is searched for; this one is
	// found by its namespace, innermost pid and start time.
	elsewhere := s
	ns := "pid:[1]"
	elsewhere.PidNamespace = &ns
	if got := WriterState(elsewhere, "/proc"); got == WriterAlive {
		t.Errorf("a namespace nobody is in: %v, want gone or unknown", got)
	}
	old := Status{Pid: os.Getpid()} // an older lfinit's file: pid only
	if got := WriterState(old, "/proc"); got != WriterAlive {
		t.Errorf("pid-only file of a live pid: %v, want alive", got)
	}
}

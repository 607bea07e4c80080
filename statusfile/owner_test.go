package statusfile

import (
	"os"
	"os/exec"
	"testing"
)

func TestStartTicks(t *testing.T) {
	line := "42 (a (weird) name) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100"
	if n, ok := startTicks(line); !ok || n != 987654 {
		t.Errorf("startTicks = %d, %v; want 987654", n, ok)
	}
	zombie := "42 (x) Z 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100"
	if _, ok := startTicks(zombie); ok {
		t.Error("a zombie counts as running")
	}
	if _, ok := startTicks("garbage"); ok {
		t.Error("garbage parsed")
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

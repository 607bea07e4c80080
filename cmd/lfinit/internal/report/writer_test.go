package report

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/light-fabric/lfinit/statusfile"
)

// written is a status file this process wrote, read back: its owner is
// this process, stamped as the writer stamps it.
func written(t *testing.T) statusfile.Status {
	t.Helper()
	path := filepath.Join(t.TempDir(), "status.json")
	if err := statusfile.Prepare(path); err != nil {
		t.Fatal(err)
	}
	s, err := statusfile.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Pid != os.Getpid() {
		t.Fatalf("pid %d, want this process's %d", s.Pid, os.Getpid())
	}
	return s
}

// TestWriterState checks the three answers against real processes: this
// test's own (alive), an exited one (gone), and a pid recycled by another
// process (the start time differs: gone).
func TestWriterState(t *testing.T) {
	s := written(t)
	if s.PidNamespace == nil || s.PidStartTicks == nil {
		t.Fatal("the writer recorded no owner")
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
	old := statusfile.Status{Pid: os.Getpid()} // an older lfinit's file: pid only
	if got := WriterState(old, "/proc"); got != WriterAlive {
		t.Errorf("pid-only file of a live pid: %v, want alive", got)
	}
}

package supervisor

import (
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/statusfile"
)

// TestCauseOf: only a SIGKILL lfinit did not send asks the OOM counter,
// and an unreadable counter says unknown, never a guess.
func TestCauseOf(t *testing.T) {
	exit3 := unix.WaitStatus(3 << 8)
	byTerm, byKill := unix.WaitStatus(syscall.SIGTERM), unix.WaitStatus(syscall.SIGKILL)
	oom := func(killed, known bool) func() (bool, bool) { return func() (bool, bool) { return killed, known } }
	asked := func() (bool, bool) {
		t.Fatal("the OOM counter was read for a death that is not a foreign SIGKILL")
		return false, false
	}
	for _, c := range []struct {
		name         string
		ws           unix.WaitStatus
		lfinitKilled bool
		oom          func() (bool, bool)
		want         statusfile.Cause
	}{
		{"exit", exit3, false, asked, statusfile.CauseExited},
		{"its own answer to TERM", byTerm, false, asked, statusfile.CauseExited},
		{"exit after lfinit's kill began", exit3, true, asked, statusfile.CauseExited},
		{"lfinit's SIGKILL", byKill, true, asked, statusfile.CauseDeadline},
		{"OOM killer", byKill, false, oom(true, true), statusfile.CauseOOMKill},
		{"kill -9 from elsewhere", byKill, false, oom(false, true), statusfile.CauseKilledFromOutside},
		{"no counter", byKill, false, oom(false, false), statusfile.CauseUnknown},
	} {
		if got := CauseOf(c.ws, c.lfinitKilled, c.oom); got != c.want {
			t.Errorf("%s: cause %q, want %q", c.name, got, c.want)
		}
	}
}

package forward

import (
	"slices"
	"syscall"
	"testing"
)

func TestTableHasEverySignalOnce(t *testing.T) {
	seen := map[syscall.Signal]int{}
	for _, e := range Table {
		seen[e.Sig]++
		if e.Why == "" {
			t.Errorf("%s has no reason", Name(e.Sig))
		}
	}
	for n := 1; n <= RTMax; n++ {
		if seen[syscall.Signal(n)] != 1 {
			t.Errorf("signal %d is in the table %d times, want once", n, seen[syscall.Signal(n)])
		}
	}
	if len(Table) != RTMax {
		t.Errorf("table has %d rows, want %d", len(Table), RTMax)
	}
}

func TestTableDerivedLists(t *testing.T) {
	if !slices.Equal(DefaultShutdown, []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}) {
		t.Errorf("default shutdown signals %v", DefaultShutdown)
	}
	if !slices.Equal(Unrelayable, []syscall.Signal{32, RTMin}) {
		t.Errorf("unrelayable %v", Unrelayable)
	}
	for _, sig := range Urgent {
		if !slices.Contains(Caught, sig) {
			t.Errorf("urgent %s is not caught", Name(sig))
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGCHLD, syscall.SIGPIPE} {
		if !slices.Contains(Caught, sig) || IsRelayed(sig) {
			t.Errorf("%s must be caught and not relayed", Name(sig))
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGURG, syscall.SIGPROF, syscall.SIGKILL, syscall.SIGSTOP, 32, 33, 34} {
		if slices.Contains(Caught, sig) {
			t.Errorf("%s must not be caught", Name(sig))
		}
	}
}

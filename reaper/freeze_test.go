package reaper

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestKillTreeCountsWhatItKills runs in a re-executed copy of the test
// binary, a subreaper: twenty times, bash waits for its sleep, KillTree
// names both, and both are reaped here (bash could not reap its sleep
// first: it was stopped before anything was killed).
func TestKillTreeCountsWhatItKills(t *testing.T) {
	if os.Getenv("REAPER_KILL_CHILD") == "1" {
		killTreeChild()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=TestKillTreeCountsWhatItKills")
	cmd.Env = append(os.Environ(), "REAPER_KILL_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("subreaper child: %v\n%s", err, out)
	}
}

func killTreeChild() {
	fail := func(msg string) { os.Stderr.WriteString(msg + "\n"); os.Exit(1) }
	if err := SetSubreaper(); err != nil {
		fail("SetSubreaper: " + err.Error())
	}
	for round := range 20 {
		pid, err := syscall.ForkExec("/bin/bash", []string{"bash", "-c", "trap '' TERM; sleep 30; exit 3"},
			&syscall.ProcAttr{Files: []uintptr{0, 1, 2}, Sys: &syscall.SysProcAttr{Setpgid: true}})
		if err != nil {
			fail("fork: " + err.Error())
		}
		deadline := time.Now().Add(time.Minute)
		for ; time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if live := Live(Walk(os.Getpid())); len(live) == 2 && live[1].Comm == "sleep" {
				break
			}
		}
		// A child of a process that had not stopped yet is held for a
		// later call, as the runner's kill rounds do.
		// A process still dying when a later call walks is reached again;
		// like the runner, count each once.
		hit := map[Proc]bool{}
		for held := true; held; time.Sleep(10 * time.Millisecond) {
			res := KillTree(false, pid, true)
			if len(res.Failed) != 0 {
				fail(fmt.Sprintf("round %d: KillTree failed %+v", round, res.Failed))
			}
			for _, p := range res.Hit {
				hit[Proc{Pid: p.Pid, Start: p.Start}] = true
			}
			held = res.Held > 0
		}
		if len(hit) != 2 {
			fail(fmt.Sprintf("round %d: KillTree reached %v, want bash and its sleep", round, hit))
		}
		reaped := 0
		for empty := false; !empty && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			var exits []Exit
			exits, empty = Reap(false, nil)
			for _, e := range exits {
				if !e.Status.Signaled() || e.Status.Signal() != syscall.SIGKILL {
					fail(fmt.Sprintf("round %d: pid %d ended %v, not by SIGKILL", round, e.Pid, e.Status))
				}
			}
			reaped += len(exits)
		}
		if reaped != 2 {
			fail(fmt.Sprintf("round %d: reaped %d, want the 2 killed", round, reaped))
		}
	}
	os.Exit(0)
}

// TestSettled: stopped, exited and kernel-asleep processes can no longer
// change the tree; running and sleeping ones can.
func TestSettled(t *testing.T) {
	for _, s := range "TtZXxD" {
		if !settled(byte(s)) {
			t.Errorf("state %c not settled", s)
		}
	}
	for _, s := range "RSIWP" {
		if settled(byte(s)) {
			t.Errorf("state %c settled", s)
		}
	}
}

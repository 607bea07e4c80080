package reaper

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestExitCodeEveryStatus(t *testing.T) {
	for code := 0; code < 256; code++ {
		ws := unix.WaitStatus(code << 8)
		if got := ExitCode(ws); got != code {
			t.Fatalf("exit %d: ExitCode = %d", code, got)
		}
	}
	for sig := 1; sig <= 64; sig++ {
		for _, core := range []int{0, 0x80} {
			ws := unix.WaitStatus(sig | core)
			if got := ExitCode(ws); got != 128+sig {
				t.Fatalf("signal %d core=%x: ExitCode = %d, want %d", sig, core, got, 128+sig)
			}
		}
	}
}

func TestParseStat(t *testing.T) {
	line := "4242 (we ird) (name)) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615\n"
	p, ok := ParseStat(line)
	if !ok || p.Pid != 4242 || p.Ppid != 17 || p.State != 'S' || p.Start != 987654 || p.Comm != "we ird) (name)" {
		t.Fatalf("ParseStat = %+v, %v", p, ok)
	}
	for _, bad := range []string{"", "x (a) S 1", "12 (a) S", "12 (a) S x 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"} {
		if _, ok := ParseStat(bad); ok {
			t.Errorf("ParseStat(%q) accepted", bad)
		}
	}
}

func TestTreeAndLive(t *testing.T) {
	procs := []Proc{
		{Pid: 1, Ppid: 0, State: 'S'},
		{Pid: 10, Ppid: 1, State: 'S'},  // lfinit
		{Pid: 11, Ppid: 10, State: 'S'}, // child
		{Pid: 12, Ppid: 11, State: 'R'}, // grandchild
		{Pid: 13, Ppid: 11, State: 'Z'}, // zombie: not live, but its children count
		{Pid: 14, Ppid: 13, State: 'S'},
		{Pid: 20, Ppid: 1, State: 'S'}, // outside the tree
		{Pid: 21, Ppid: 20, State: 'S'},
	}
	got := map[int]bool{}
	for _, p := range Live(Tree(procs, 10)) {
		got[p.Pid] = true
	}
	if len(got) != 3 || !got[11] || !got[12] || !got[14] {
		t.Fatalf("Live(Tree(10)) = %v, want 11 12 14", got)
	}
	if n := len(Tree(procs, 99)); n != 0 {
		t.Fatalf("Tree of a missing pid = %d", n)
	}
}

func TestTableSeesSelf(t *testing.T) {
	self := os.Getpid()
	for _, p := range Table() {
		if p.Pid == self {
			if p.Ppid != os.Getppid() {
				t.Fatalf("ppid = %d, want %d", p.Ppid, os.Getppid())
			}
			return
		}
	}
	t.Fatal("own pid not in /proc table")
}

// TestWalkFindsTheTreeOnly: Walk finds a child started from another
// thread, a grandchild and a great-grandchild, the same tree a full
// /proc scan finds, and nothing outside it (the test's parent, its
// siblings).
func TestWalkFindsTheTreeOnly(t *testing.T) {
	if Method() != "children" {
		t.Skip("this kernel keeps no children lists; Walk reads all of /proc")
	}
	started := make(chan int)
	go func() {
		runtime.LockOSThread() // a thread of its own: its children are listed under it
		// A group of its own, so that the test ends all of it.
		attr := &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Setpgid: true}}
		pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", "sh -c 'sleep 30; :' & sleep 30; :"}, attr)
		if err != nil {
			pid = -1
		}
		started <- pid
	}()
	pid := <-started
	if pid < 0 {
		t.Fatal("cannot start sh")
	}
	defer func() {
		syscall.Kill(-pid, syscall.SIGKILL)
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, 0, nil)
	}()
	var walked []Proc
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		walked = Walk(os.Getpid())
		if len(walked) >= 4 || time.Now().After(deadline) {
			break
		}
	}
	want := Tree(Table(), os.Getpid())
	if len(walked) != 4 || len(want) != len(walked) {
		t.Fatalf("Walk found %v; a scan of /proc finds %v (want sh, sleep, sh, sleep)", walked, want)
	}
	for _, p := range walked {
		if !slices.Contains(want, p) && !slices.ContainsFunc(want, func(q Proc) bool { return q.Pid == p.Pid && q.Start == p.Start }) {
			t.Errorf("Walk found %+v, which the scan does not", p)
		}
		if p.Pid == os.Getppid() {
			t.Errorf("Walk found the test's parent")
		}
	}
}

// TestSubreaperReapsOrphanAndSignalsTree runs in a re-executed copy of the
// test binary, which becomes a subreaper, so that the orphan lands on it.
func TestSubreaperReapsOrphanAndSignalsTree(t *testing.T) {
	if os.Getenv("REAPER_CHILD") == "1" {
		subreaperChild()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=TestSubreaperReapsOrphanAndSignalsTree")
	cmd.Env = append(os.Environ(), "REAPER_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("subreaper child: %v\n%s", err, out)
	}
}

func subreaperChild() {
	fail := func(msg string) { os.Stderr.WriteString(msg + "\n"); os.Exit(1) }
	if err := SetSubreaper(); err != nil {
		fail("SetSubreaper: " + err.Error())
	}
	// sh starts a long sleep in the background and exits: the sleep is an orphan.
	pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", "sleep 30 & exit 0"}, &syscall.ProcAttr{Files: []uintptr{0, 1, 2}})
	if err != nil {
		fail("fork: " + err.Error())
	}
	deadline := time.Now().Add(5 * time.Second)
	shReaped := false
	for !shReaped && time.Now().Before(deadline) {
		exits, _ := Reap(false, nil)
		for _, e := range exits {
			shReaped = shReaped || e.Pid == pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !shReaped {
		fail("sh not reaped")
	}
	// sh may exit before its forked child has exec'd sleep: until then the
	// orphan's comm is still "sh", so wait for the exec, not only the count.
	var live []Proc
	for ; time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		live = Live(Walk(os.Getpid()))
		if len(live) == 1 && live[0].Comm == "sleep" {
			break
		}
	}
	if len(live) != 1 || live[0].Comm != "sleep" {
		fail(fmt.Sprintf("want the orphaned sleep as the one descendant, found %+v", live))
	}
	if res := SignalTree(false, syscall.SIGKILL, 0); len(res.Hit) != 1 || res.Hit[0].Comm != "sleep" || len(res.Failed) != 0 {
		fail(fmt.Sprintf("SignalTree signalled a wrong set: %+v", res))
	}
	for time.Now().Before(deadline) {
		if _, empty := Reap(false, nil); empty {
			os.Exit(0)
		}
		time.Sleep(5 * time.Millisecond)
	}
	fail("tree not empty after SIGKILL")
}

// TestChangedLooksWithoutReaping: Changed sees a stop (with untraced) and
// an exit of one child, and leaves the exited child for the reaper.
func TestChangedLooksWithoutReaping(t *testing.T) {
	pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "30"}, &syscall.ProcAttr{Files: []uintptr{0, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	settle := func(what string, want func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !want(); time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("Changed never reported %s", what)
			}
		}
	}
	if Changed(pid, true) {
		t.Fatal("a running child reported as changed")
	}
	syscall.Kill(pid, syscall.SIGSTOP)
	settle("the stop", func() bool { return Changed(pid, true) })
	if Changed(pid, false) {
		t.Error("a stop reported without untraced")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	settle("the exit", func() bool { return Changed(pid, false) })
	if !Changed(pid, false) {
		t.Fatal("looking reaped the child")
	}
	var ws unix.WaitStatus
	if got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); got != pid || err != nil || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not left to reap: wait4 = %d, %v, %v", got, err, ws)
	}
	if Changed(pid, false) {
		t.Error("a reaped child reported as changed")
	}
}

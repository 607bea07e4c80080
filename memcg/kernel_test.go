//go:build linux

package memcg

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFindOnThisMachine reads the test's own memory cgroup, as lfinit
// reads its own.
func TestFindOnThisMachine(t *testing.T) {
	if !exists("/sys/fs/cgroup/memory") {
		t.Skip("no cgroup v1 memory controller at /sys/fs/cgroup/memory")
	}
	g, err := Find()
	if err != nil {
		t.Fatalf("Find: %v", err)
	}
	r := g.Read()
	t.Logf("%v: %+v (%s)", g, r, r.Describe())
	// oom_kill is in memory.oom_control since Linux 4.13.
	if !r.HasOOM || !r.HasLimit || !r.HasPeak {
		t.Errorf("Read = %+v, want the counter, the limit and the peak", r)
	}
}

// oomHelperEnv names the cgroup a re-executed test binary joins before it
// eats memory until the OOM killer stops it.
const oomHelperEnv = "MEMCG_TEST_OOM_CGROUP"

const oomLimit = 64 << 20

// TestOOMKillV1 makes a v1 memory cgroup with a 64 MiB limit, runs a child
// in it that touches memory until the kernel OOM-kills it, and checks that
// the Group reads the kill, the limit and a peak near the limit.
func TestOOMKillV1(t *testing.T) {
	if dir := os.Getenv(oomHelperEnv); dir != "" {
		eatMemory(dir)
		return
	}
	const mount = "/sys/fs/cgroup/memory"
	if os.Geteuid() != 0 {
		t.Skip("making a memory cgroup needs root")
	}
	if !exists(filepath.Join(mount, "memory.oom_control")) {
		t.Skip("no cgroup v1 memory controller at " + mount)
	}
	removeStale(t, mount)
	name := fmt.Sprintf("memcg-test-%d-%08x", os.Getpid(), rand.Uint32())
	dir := filepath.Join(mount, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeCgroup(t, mount, dir) })
	limitMemory(t, dir)

	// Found the way lfinit finds its own: by the line naming it.
	cgroupFile := filepath.Join(t.TempDir(), "cgroup")
	if err := os.WriteFile(cgroupFile, []byte("4:memory:/"+name+"\n0::/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := FindIn(cgroupFile, "/sys/fs/cgroup")
	if err != nil || g.Dir() != dir || g.Version() != 1 {
		t.Fatalf("FindIn = %v, %v; want v1 %s", g, err, dir)
	}
	before := g.Read()
	if !before.HasOOM {
		t.Skipf("memory.oom_control has no oom_kill on this kernel (before 4.13): %+v", before)
	}

	ws, out := runEater(t, dir)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want SIGKILL by the OOM killer; output:\n%s", ws, out)
	}
	after := g.Read()
	t.Logf("before %+v, after %+v: %s", before, after, after.Describe())
	if killed, known := OOMKilled(before, after); !killed || !known {
		t.Errorf("OOMKilled = %v, %v; want true, true", killed, known)
	}
	if !after.HasLimit || after.Unlimited || after.Limit != oomLimit {
		t.Errorf("limit read %+v, want %d", after, oomLimit)
	}
	// The kernel may overshoot by a few pages (a charge it forces through
	// while the OOM kill is under way; seen: one page).
	if !after.HasPeak || after.Peak < oomLimit*7/8 || after.Peak > oomLimit*9/8 {
		t.Errorf("peak read %+v, want near %d", after, oomLimit)
	}
}

// limitMemory sets a 64 MiB limit on dir, swap included where the kernel
// accounts it, and no swapping otherwise, so that the child dies promptly.
func limitMemory(t *testing.T, dir string) {
	t.Helper()
	limit := strconv.Itoa(oomLimit)
	if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(limit), 0); err != nil {
		t.Fatal(err)
	}
	// memsw must be set after the memory limit: it may never be below it.
	if memsw := filepath.Join(dir, "memory.memsw.limit_in_bytes"); exists(memsw) {
		if err := os.WriteFile(memsw, []byte(limit), 0); err != nil {
			t.Fatal(err)
		}
	}
	// Best effort: without swap accounting, this keeps anon pages in RAM.
	_ = os.WriteFile(filepath.Join(dir, "memory.swappiness"), []byte("0"), 0)
}

// runEater runs the test binary in eatMemory's mode, bounded by a minute,
// and returns how it ended.
func runEater(t *testing.T, dir string) (syscall.WaitStatus, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestOOMKillV1$", "-test.count=1")
	cmd.Env = append(os.Environ(), oomHelperEnv+"="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	if !timer.Stop() {
		t.Fatalf("child not killed within a minute; output:\n%s", out.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.Sys().(syscall.WaitStatus), out.String()
}

// eatMemory joins the cgroup, then holds 1 MiB slices, every page touched,
// up to 8 times the limit; it exits 3 if the OOM killer never came.
func eatMemory(dir string) {
	pid := []byte(strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), pid, 0); err != nil {
		fmt.Fprintln(os.Stderr, "join the cgroup:", err)
		os.Exit(2)
	}
	var held [][]byte
	for range 8 * oomLimit >> 20 {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		held = append(held, b)
	}
	fmt.Fprintf(os.Stderr, "holding %d MiB and not killed\n", len(held))
	os.Exit(3)
}

// removeCgroup moves any process left in dir to the mount's root cgroup and
// removes dir, so that the test leaves nothing behind.
func removeCgroup(t *testing.T, mount, dir string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for _, pid := range strings.Fields(string(procs)) {
			_ = os.WriteFile(filepath.Join(mount, "cgroup.procs"), []byte(pid), 0)
		}
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("cgroup %s left behind: %v", dir, err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// removeStale removes the cgroups of earlier runs whose test process is
// gone: a run killed by its timeout runs no cleanup.
func removeStale(t *testing.T, mount string) {
	stale, _ := filepath.Glob(filepath.Join(mount, "memcg-test-*-*"))
	for _, dir := range stale {
		pid := strings.Split(filepath.Base(dir), "-")[2]
		if !exists("/proc/" + pid) {
			removeCgroup(t, mount, dir)
		}
	}
}

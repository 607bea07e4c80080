package release

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
)

// qemuNames maps a release architecture to its qemu-user emulator.
var qemuNames = map[string]string{
	"386": "i386", "amd64": "x86_64", "arm64": "aarch64", "armv7": "arm", "loong64": "loongarch64",
	"mips": "mips", "mipsle": "mipsel", "mips64": "mips64", "mips64le": "mips64el",
	"ppc64": "ppc64", "ppc64le": "ppc64le", "riscv64": "riscv64", "s390x": "s390x",
}

// releaseBinary is one lfinit-VERSION-linux-ARCH of a release directory.
type releaseBinary struct {
	path, version, arch string
}

var binaryName = regexp.MustCompile(`^lfinit-(.+)-linux-([0-9a-z]+)$`)

// qemuArches are the architectures tested when no release dir is given.
func qemuArches() []string {
	if v := os.Getenv("LFINIT_RELEASE_ARCHES"); v != "" {
		return strings.Split(v, ",")
	}
	return []string{"arm64", "s390x"}
}

// qemuRelease is the release of the qemu arches the clone's first release
// lacks (binaries only).
var qemuRelease struct {
	once sync.Once
	out  string
	err  error
}

// releaseBinaries lists the binaries to test: LFINIT_RELEASE_DIR's, or
// those of the clone's releases: reproArches and the qemu arches.
func releaseBinaries(t *testing.T) []releaseBinary {
	dirs := []string{os.Getenv("LFINIT_RELEASE_DIR")}
	if dirs[0] == "" {
		dirs[0] = firstRelease(t)
		var extra []string
		for _, a := range qemuArches() {
			if !slices.Contains(reproArches, a) {
				extra = append(extra, a)
			}
		}
		if len(extra) > 0 {
			clone, _ := snapshotRepo(t)
			qemuRelease.once.Do(func() {
				qemuRelease.out = filepath.Join(state, "dist-qemu")
				_, qemuRelease.err = release(clone, qemuRelease.out, extra, []string{"--no-image", "--no-deb"})
			})
			if qemuRelease.err != nil {
				t.Fatal(qemuRelease.err)
			}
			dirs = append(dirs, qemuRelease.out)
		}
	}
	var bins []releaseBinary
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if m := binaryName.FindStringSubmatch(e.Name()); m != nil {
				bins = append(bins, releaseBinary{filepath.Join(dir, e.Name()), m[1], m[2]})
			}
		}
	}
	if len(bins) == 0 {
		t.Fatalf("no lfinit-VERSION-linux-ARCH binary in %v", dirs)
	}
	return bins
}

// emulator is the command prefix that runs b here: nothing for the host's
// architecture (and 386 on amd64), else qemu-ARCH-static (called explicitly: binfmt_misc is
// not mounted on the machines this runs on, and need not be).
func emulator(t *testing.T, b releaseBinary) []string {
	t.Helper()
	if b.arch == runtime.GOARCH || b.arch == "386" && runtime.GOARCH == "amd64" {
		// 386 runs natively on amd64 (the kernel's IA-32 mode): qemu-i386
		// 7.2 crashes Go's 386 runtime ("morestack on g0").
		return nil
	}
	name, ok := qemuNames[b.arch]
	if !ok {
		t.Fatalf("no qemu-user emulator known for %s", b.arch)
	}
	path, err := exec.LookPath("qemu-" + name + "-static")
	switch {
	case err == nil:
	case os.Getenv("LFINIT_RELEASE_DIR") != "":
		// A release is tested on every architecture or not made.
		t.Fatalf("qemu-%s-static not found: install qemu-user-static (scripts/install-qualification-deps)", name)
	default:
		t.Skipf("qemu-%s-static not found: install qemu-user-static (scripts/install-qualification-deps), as CI does", name)
	}
	return []string{path}
}

// TestReleaseBinaries runs the core subset on every release binary, under
// qemu-user for the foreign ones, each as PID 1 of a PID namespace. (qemu-user
// 7.2 does not emulate PR_SET_CHILD_SUBREAPER, so a foreign lfinit cannot be
// a subreaper; PID 1 needs none.)
func TestReleaseBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and emulates release binaries (-short)")
	}
	if os.Geteuid() != 0 {
		t.Skip("release binaries run as PID 1 of a PID namespace: needs root for unshare --pid (as in CI)")
	}
	for _, b := range releaseBinaries(t) {
		t.Run(b.arch, func(t *testing.T) {
			emu := emulator(t, b)
			checkStaticStripped(t, b.path)
			t.Run("version", func(t *testing.T) { testVersionOf(t, emu, b) })
			t.Run("exit-code", func(t *testing.T) { testExitCode(t, emu, b) })
			t.Run("relayed-signal", func(t *testing.T) { testRelayedSignal(t, emu, b) })
			t.Run("orphan-reaped", func(t *testing.T) { testOrphanReaped(t, emu, b) })
			t.Run("deadline-kill", func(t *testing.T) { testDeadlineKill(t, emu, b) })
		})
	}
}

// testVersionOf wants lfinit version --json to name the release and the
// binary's platform.
func testVersionOf(t *testing.T, emu []string, b releaseBinary) {
	argv := append(append(emu[:len(emu):len(emu)], b.path), "version", "--json")
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		t.Fatalf("lfinit version --json: %v", err)
	}
	var v struct{ Version, Revision, Platform string }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("lfinit version --json = %q: %v", out, err)
	}
	platform := "linux/" + b.arch
	if b.arch == "armv7" {
		platform = "linux/arm/v7"
	}
	if v.Version != b.version || v.Platform != platform || len(v.Revision) != 40 {
		t.Errorf("lfinit version --json = %s; want version %s, platform %s and a commit", out, b.version, platform)
	}
}

// testExitCode: the child's exit code is lfinit's.
func testExitCode(t *testing.T, emu []string, b releaseBinary) {
	r := startPID1(t, emu, b, nil, "exit 7")
	if code := r.wait(time.Minute); code != 7 {
		t.Errorf("lfinit exited %d for a child that exited 7\n%s", code, r.out())
	}
}

// testRelayedSignal: USR1 sent to lfinit reaches the child.
func testRelayedSignal(t *testing.T, emu []string, b releaseBinary) {
	r := startPID1(t, emu, b, nil, `trap 'echo USR1 >"$1/got"; exit 0' USR1; : >"$1/ready"; while :; do sleep 0.05; done`)
	r.waitFile("ready")
	r.signal(syscall.SIGUSR1)
	if code := r.wait(time.Minute); code != 0 {
		t.Errorf("lfinit exited %d, want 0 (the child exits 0 on USR1)\n%s", code, r.out())
	}
	if got, _ := os.ReadFile(filepath.Join(r.dir, "got")); string(got) != "USR1\n" {
		t.Errorf("the child recorded %q, want USR1", got)
	}
}

// testOrphanReaped: a grandchild orphaned to lfinit is reaped once it exits;
// the child checks that no zombie is left of it.
func testOrphanReaped(t *testing.T, emu []string, b releaseBinary) {
	r := startPID1(t, emu, b, nil, `(sleep 0.2 & echo $! >"$1/orphan"); sleep 2
p=$(cat "$1/orphan"); [ -n "$p" ] || exit 4
if [ -e /proc/$p ]; then cat /proc/$p/stat >"$1/zombie"; exit 3; fi
exit 0`)
	if code := r.wait(time.Minute); code != 0 {
		z, _ := os.ReadFile(filepath.Join(r.dir, "zombie"))
		t.Errorf("lfinit exited %d, want 0 (3: the orphan was not reaped: %s)\n%s", code, z, r.out())
	}
	// The child and the orphan, at least.
	m := regexp.MustCompile(`msg=exit .*reaped=(\d+)`).FindStringSubmatch(r.out())
	n := 0
	if m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	if n < 2 {
		t.Errorf("lfinit's exit line does not count the orphan as reaped (want reaped >= 2)\n%s", r.out())
	}
}

// testDeadlineKill: a child that ignores TERM is SIGKILLed at the hard
// deadline (grace 1s + floor 250ms), and lfinit exits 1, naming who sent
// the TERM.
func testDeadlineKill(t *testing.T, emu []string, b releaseBinary) {
	r := startPID1(t, emu, b, []string{"--grace=1s", "--floor=250ms"}, `trap '' TERM; : >"$1/ready"; while :; do sleep 0.05; done`)
	r.waitFile("ready")
	sent := time.Now()
	r.signal(syscall.SIGTERM)
	code := r.wait(time.Minute)
	took := time.Since(sent)
	if code != 1 {
		t.Errorf("lfinit exited %d after a deadline kill, want 1\n%s", code, r.out())
	}
	if !strings.Contains(r.out(), "outcome=deadline-exceeded") {
		t.Errorf("no outcome=deadline-exceeded in lfinit's log\n%s", r.out())
	}
	// The test is outside lfinit's PID namespace; where no trampoline
	// records senders (package sender), that is said as unknown.
	sender := "signal_sender=unknown"
	if b.arch == "amd64" || b.arch == "arm64" {
		sender = "signal_sender=outside-pid-namespace signal_sender_uid=0"
	}
	if !strings.Contains(r.out(), sender) {
		t.Errorf("no %s in lfinit's log\n%s", sender, r.out())
	}
	// Not before the hard deadline; the upper bound is generous for emulation.
	if took < 1200*time.Millisecond || took > 20*time.Second {
		t.Errorf("lfinit exited %v after TERM, want about 1.25s (grace + floor)", took)
	}
}

// pid1Run is lfinit as PID 1 of a new PID namespace, running a /bin/sh
// script (native: qemu-user execs native programs natively) with its
// temporary directory as $1.
type pid1Run struct {
	t    *testing.T
	cmd  *exec.Cmd
	dir  string
	log  measure.Buffer
	done chan struct{}
	code int
}

func startPID1(t *testing.T, emu []string, b releaseBinary, lfinitArgs []string, script string) *pid1Run {
	t.Helper()
	r := &pid1Run{t: t, dir: t.TempDir(), done: make(chan struct{})}
	argv := append([]string{"--pid", "--fork", "--mount-proc", "--kill-child"}, emu...)
	argv = append(append(argv, b.path), lfinitArgs...)
	argv = append(argv, "--", "/bin/sh", "-c", script, "sh", r.dir)
	r.cmd = exec.Command("unshare", argv...)
	r.cmd.Stdout, r.cmd.Stderr = &r.log, &r.log
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.cmd.Wait()
		r.code = r.cmd.ProcessState.ExitCode()
		close(r.done)
	}()
	t.Cleanup(func() {
		r.cmd.Process.Kill() // unshare --kill-child takes the namespace with it
		<-r.done
	})
	return r
}

// pid1 is lfinit's pid as the host sees it: unshare's only child.
func (r *pid1Run) pid1() int {
	r.t.Helper()
	var pid int
	waitFor(r.t, 10*time.Second, "unshare's child", func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", r.cmd.Process.Pid, r.cmd.Process.Pid))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	return pid
}

func (r *pid1Run) signal(sig syscall.Signal) {
	r.t.Helper()
	if err := syscall.Kill(r.pid1(), sig); err != nil {
		r.t.Fatalf("kill %v: %v", sig, err)
	}
}

// wait is lfinit's exit code, failing the test after limit.
func (r *pid1Run) wait(limit time.Duration) int {
	r.t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(limit):
		r.t.Fatalf("lfinit still running after %v\n%s", limit, r.out())
		return -1
	}
}

func (r *pid1Run) waitFile(name string) {
	r.t.Helper()
	waitFor(r.t, 30*time.Second, name, func() bool {
		_, err := os.Stat(filepath.Join(r.dir, name))
		return err == nil
	})
}

func (r *pid1Run) out() string { return r.log.String() }

// waitFor polls ok every 20ms until it holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
	}
}

// Package container qualifies lfinit with a real container engine: podman
// (Debian's, with runc and cgroupfs) runs a FROM scratch image holding the
// static lfinit and test/helper, and each test stops, kills or signals it
// the way an operator would, then checks the exit code podman reports and
// lfinit's log. The Kubernetes Pod manifest and Dockerfile.example are run
// here too. It needs root and podman; elsewhere it skips and says why.
package container

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// baseImage holds /lfinit, /helper and tinyutils as /bin/true, /bin/sleep,
// /bin/each and /bin/pidfd-errno.
const baseImage = "localhost/lfinit-qualification:test"

var (
	binDir  string // static binaries: lfinit, helper, tinyutils
	skipWhy string
	repo    string // the repository root
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	var err error
	if repo, err = filepath.Abs("../.."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	flag.Parse() // for testing.Short
	skipWhy = prerequisites()
	if skipWhy != "" {
		return m.Run()
	}
	state, err := os.MkdirTemp("", "lfinit-container-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer removeState(state)
	if err := isolate(state); err != nil {
		fmt.Fprintln(os.Stderr, "container tests:", err)
		return 1
	}
	binDir = filepath.Join(state, "bin")
	if err := buildStatic(binDir); err != nil {
		fmt.Fprintln(os.Stderr, "container tests:", err)
		return 1
	}
	if err := buildBaseImage(filepath.Join(state, "base")); err != nil {
		fmt.Fprintln(os.Stderr, "container tests:", err)
		return 1
	}
	return m.Run()
}

// prerequisites says why the tests cannot run here, or "" when they can.
func prerequisites() string {
	const install = "; install it with scripts/install-qualification-deps (apt-get install podman runc), as CI does"
	switch {
	case testing.Short():
		return "container tests build images and run podman (-short: scripts/test runs them)"
	case os.Geteuid() != 0:
		return "container tests need root (rootful podman with runc and cgroupfs, as in CI)"
	case !onPath("podman"):
		return "podman is not installed" + install
	case !onPath("runc"):
		return "runc is not installed" + install
	}
	return ""
}

func onPath(name string) bool {
	if _, err := exec.LookPath(name); err == nil {
		return true
	}
	// Debian puts runc in /usr/sbin, which a non-login PATH may lack.
	_, err := os.Stat("/usr/sbin/" + name)
	return err == nil
}

// isolate points podman at a configuration and a store of our own under
// state, through CONTAINERS_CONF and CONTAINERS_STORAGE_CONF, so the tests
// neither see nor touch the machine's containers, images, locks or events.
func isolate(state string) error {
	nofile, err := hardLimit(unix.RLIMIT_NOFILE)
	if err != nil {
		return err
	}
	nproc, err := hardLimit(unix.RLIMIT_NPROC)
	if err != nil {
		return err
	}
	events := "file" // journald is usually missing in CI containers
	if _, err := os.Stat("/run/systemd/journal/socket"); err == nil {
		events = "journald"
	}
	conf := fmt.Sprintf(`# Written by the container tests of lfinit (test/container).
[containers]
# podman's default nofile (1048576) is above the hard limit here, which
# runc refuses; nproc likewise.
default_ulimits = ["nofile=%[1]d:%[1]d", "nproc=%[2]d:%[2]d"]
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = %[3]q
# File locks under our tmp_dir instead of the shared /dev/shm/libpod_lock,
# whose "refresh" would free the locks of the machine's own containers.
lock_type = "file"
tmp_dir = %[4]q
static_dir = %[5]q
volume_path = %[6]q

[network]
network_config_dir = %[7]q
`, nofile, nproc, events, filepath.Join(state, "tmp"), filepath.Join(state, "root", "libpod"),
		filepath.Join(state, "volumes"), filepath.Join(state, "networks"))
	storage := fmt.Sprintf(`[storage]
driver = "overlay"
graphroot = %q
runroot = %q
`, filepath.Join(state, "root"), filepath.Join(state, "runroot"))
	for name, text := range map[string]string{"containers.conf": conf, "storage.conf": storage} {
		if err := os.WriteFile(filepath.Join(state, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	os.Setenv("CONTAINERS_CONF", filepath.Join(state, "containers.conf"))
	os.Setenv("CONTAINERS_STORAGE_CONF", filepath.Join(state, "storage.conf"))
	// runc in /usr/sbin must be found even from a non-login PATH.
	os.Setenv("PATH", os.Getenv("PATH")+":/usr/sbin:/sbin")
	out, err := podmanCmd(30*time.Second, "info", "--format", "{{.Store.GraphRoot}} {{.Host.OCIRuntime.Name}} {{.Host.CgroupManager}}")
	if err != nil {
		return fmt.Errorf("podman info: %v\n%s", err, out)
	}
	if !strings.HasPrefix(out, filepath.Join(state, "root")+" runc cgroupfs") {
		return fmt.Errorf("podman did not take our configuration: %s", out)
	}
	return nil
}

// hardLimit is the hard limit on resource, capped at 20000 (the machines
// this runs on), since a container may not be given more.
func hardLimit(resource int) (uint64, error) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(resource, &rl); err != nil {
		return 0, err
	}
	return min(rl.Max, 20000), nil
}

// buildStatic builds the static binaries the images are made of.
func buildStatic(dir string) error {
	for name, pkg := range map[string]string{"lfinit": "./cmd/lfinit", "helper": "./test/helper", "tinyutils": "./test/container/tinyutils"} {
		cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, name), pkg)
		cmd.Dir = repo
		// Static: a FROM scratch image has no libc.
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return nil
}

// buildBaseImage builds baseImage in the build context dir.
func buildBaseImage(dir string) error {
	return buildImage(dir, baseImage, `FROM scratch
COPY lfinit helper /
COPY tinyutils /bin/true
COPY tinyutils /bin/sleep
COPY tinyutils /bin/each
COPY tinyutils /bin/pidfd-errno
COPY tinyutils /bin/alloc
ENV LFINIT_LOG_FORMAT=json
ENTRYPOINT ["/lfinit"]
CMD ["--", "/helper"]
`, map[string]string{"lfinit": "lfinit", "helper": "helper", "tinyutils": "tinyutils"})
}

// buildImage writes containerfile and copies of binDir's files (context
// name → binary name) into dir, and builds tag from it.
func buildImage(dir, tag, containerfile string, files map[string]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for dst, src := range files {
		b, err := os.ReadFile(filepath.Join(binDir, src))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, dst)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "Containerfile"), []byte(containerfile), 0o644); err != nil {
		return err
	}
	if out, err := podmanCmd(2*time.Minute, "build", "--quiet", "--network", "none", "-t", tag, "-f", filepath.Join(dir, "Containerfile"), dir); err != nil {
		return fmt.Errorf("podman build %s: %v\n%s\nContainerfile:\n%s", tag, err, out, containerfile)
	}
	return nil
}

// podmanCmd runs podman with a time limit and returns its combined output.
func podmanCmd(limit time.Duration, args ...string) (string, error) {
	return podmanFiles(limit, nil, args...)
}

// podmanFiles is podmanCmd with files as podman's descriptors 3, 4, ….
func podmanFiles(limit time.Duration, files []*os.File, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "podman", args...)
	cmd.ExtraFiles = files
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("podman %s: still running after %v", strings.Join(args, " "), limit)
	}
	return strings.TrimSpace(string(out)), err
}

// removeState removes every container, pod and image of our store, then
// the store itself, unmounting whatever is still mounted under it.
func removeState(state string) {
	podmanCmd(time.Minute, "pod", "rm", "--all", "--force", "--time", "0")
	podmanCmd(time.Minute, "rm", "--all", "--force", "--time", "0")
	podmanCmd(time.Minute, "rmi", "--all", "--force")
	var mounts []string
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if fields := strings.Fields(sc.Text()); len(fields) > 4 && strings.HasPrefix(fields[4], state+"/") {
				mounts = append(mounts, fields[4])
			}
		}
		f.Close()
	}
	// Deepest first.
	slices.SortFunc(mounts, func(a, b string) int { return len(b) - len(a) })
	for _, m := range mounts {
		syscall.Unmount(m, syscall.MNT_DETACH)
	}
	os.RemoveAll(state)
}

// needPodman skips the test when the engine is not usable here.
func needPodman(t *testing.T) {
	t.Helper()
	if skipWhy != "" {
		t.Skip(skipWhy)
	}
}

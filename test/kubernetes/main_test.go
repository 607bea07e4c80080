// Package kubernetes proves lfinit under a real kubelet: a single-node
// cluster built from source (see ./build), with containerd, on this
// machine only. The tests need root; they skip with -short.
package kubernetes

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// theNode is the cluster every test uses; nil when the tests skip.
var theNode *node

// appImage is lfinit, the test helper and the rolling-restart test's
// HTTP server, FROM scratch.
const appImage = "localhost/lfinit-test/app:1"

func TestMain(m *testing.M) {
	flag.Parse()
	if reason := skipReason(); reason != "" {
		fmt.Println("kubernetes: skipped:", reason)
		os.Exit(0)
	}
	os.Exit(run(m))
}

// skipReason says why the node cannot run here, or "".
func skipReason() string {
	switch {
	case testing.Short():
		return "-short: no node is started"
	case os.Geteuid() != 0:
		return "needs root (a kubelet, containerd, a bridge)"
	}
	for _, tool := range []string{"etcd", "containerd", "ctr", "runc", "ip", "iptables"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " is missing: run scripts/install-deps as root"
		}
	}
	return ""
}

func run(m *testing.M) int {
	start := time.Now()
	out, err := exec.Command("./build").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubernetes: build:", err)
		return 1
	}
	bin := strings.TrimSpace(string(out))
	dir, err := os.MkdirTemp("/tmp", "lfk8s-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	before := hostState()
	n, err := up(ctx, dir, bin)
	if err == nil {
		err = buildApp(dir)
	}
	if err == nil {
		err = n.importImage(appImageFiles(dir))
	}
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubernetes: node:", err)
	} else {
		fmt.Printf("kubernetes: node Ready after %s\n", time.Since(start).Round(time.Millisecond))
		theNode = n
		code = m.Run()
	}
	if err := n.down(before); err != nil {
		fmt.Fprintln(os.Stderr, "kubernetes: teardown:", err)
		code = 1
	}
	if left := leftovers(dir, before); len(left) > 0 {
		fmt.Fprintln(os.Stderr, "kubernetes: the node left behind:", strings.Join(left, "; "))
		code = 1
	}
	return code
}

// leftovers is what of the node is still on the host after its teardown.
func leftovers(dir string, before host) []string {
	var left []string
	if _, err := os.Stat(dir); err == nil {
		left = append(left, dir)
	}
	left = append(left, mountsUnder(dir)...)
	if _, err := os.Stat("/sys/class/net/" + bridgeName); err == nil {
		left = append(left, "the bridge "+bridgeName)
	}
	for _, h := range cgroupHierarchies() {
		if _, err := os.Stat(filepath.Join(h, cgroupRoot)); err == nil {
			left = append(left, filepath.Join(h, cgroupRoot))
		}
	}
	for ns := range netnsNames() {
		if !before.netns[ns] {
			left = append(left, ns)
		}
	}
	for _, d := range sharedDirs {
		if _, err := os.Stat(d); err == nil && !before.dirs[d] {
			left = append(left, d)
		}
	}
	return left
}

// appImageFiles builds lfinit as it ships and the test helper, and names
// the image that holds them.
func appImageFiles(dir string) image {
	img := image{name: appImage, files: map[string]string{
		"/lfinit": filepath.Join(dir, "bin", "lfinit"),
		"/helper": filepath.Join(dir, "bin", "helper"),
		"/server": filepath.Join(dir, "bin", "server"),
	}, entrypoint: []string{"/lfinit"}}
	return img
}

// buildApp builds lfinit (scripts/build), the helper and the server into dir/bin,
// from this repository or the source tree LFINIT_K8S_SRC names.
func buildApp(dir string) error {
	root, _ := filepath.Abs("../..")
	if src := os.Getenv("LFINIT_K8S_SRC"); src != "" {
		root = src
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "build"), filepath.Join(dir, "bin", "lfinit"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("scripts/build: %v: %s", err, out)
	}
	for name, pkg := range map[string]string{"helper": "./test/helper", "server": "./test/rollout/server"} {
		cmd = exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, "bin", name), pkg)
		cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %v: %s", pkg, err, out)
		}
	}
	return nil
}

// host is what of the host the node may add to, as it was before.
type host struct {
	netns map[string]bool // the network namespaces in /var/run/netns
	dirs  map[string]bool // the directories containerd's shims and CRI make, if they existed
}

// sharedDirs are made by containerd 1.6 and the kubelet whatever their
// roots and states (the kubelet's links to container logs among them).
var sharedDirs = []string{"/run/containerd/s", "/run/containerd", "/var/run/netns", "/var/log/containers"}

func hostState() host {
	h := host{netns: netnsNames(), dirs: map[string]bool{}}
	for _, d := range sharedDirs {
		_, err := os.Stat(d)
		h.dirs[d] = err == nil
	}
	return h
}

// netnsNames are the network namespaces named in /var/run/netns now.
func netnsNames() map[string]bool {
	names, _ := filepath.Glob("/var/run/netns/*")
	set := map[string]bool{}
	for _, n := range names {
		set[n] = true
	}
	return set
}

package kubernetes

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// down stops the node and removes everything it made: pods, processes,
// mounts, network namespaces, the bridge, cgroups, the kubelet's
// iptables chains and sysctls. It reports what it could not remove.
func (n *node) down(before host) error {
	n.deletePods()
	// The kubelet first, so that nothing restarts what is stopped next.
	for i := len(n.procs) - 1; i >= 0; i-- {
		stop(n.procs[i])
	}
	n.procs = nil
	var errs []error
	errs = append(errs, killShims(n.path("containerd.sock")))
	errs = append(errs, unmountUnder(n.dir))
	errs = append(errs, removeNetns(before.netns))
	removeLinksInto("/var/log/containers", n.dir)
	if !before.dirs["/run/containerd"] {
		os.RemoveAll("/run/containerd/s") // shim sockets: no other containerd ran
	}
	for _, d := range sharedDirs {
		if !before.dirs[d] {
			os.Remove(d) // only when empty: nothing else's is removed
		}
	}
	exec.Command("ip", "link", "del", bridgeName).Run()
	// kube-proxy removes its own rules; then what else the kubelet made.
	exec.Command(n.path("bin", "kube-proxy"), "--cleanup").Run()
	errs = append(errs, killCgroups())
	errs = append(errs, removeCgroups())
	removeChains()
	for k, v := range n.sysctls {
		if v != "" {
			os.WriteFile("/proc/sys/"+k, []byte(v), 0o644)
		}
	}
	errs = append(errs, os.RemoveAll(n.dir))
	return errors.Join(errs...)
}

// deletePods deletes every pod at once and waits (bounded) for the
// kubelet to stop their sandboxes, which also returns their addresses.
func (n *node) deletePods() {
	if n.client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	zero := int64(0)
	nss, err := n.client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, ns := range nss.Items {
		n.client.CoreV1().Pods(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	}
	poll(ctx, 30*time.Second, "the pods to go", func() (bool, error) {
		pods, err := n.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		return err != nil || len(pods.Items) == 0, nil
	})
}

// stop ends a component: TERM, then KILL after 10 s.
func stop(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// killShims kills the containerd shims of this node's containerd (named
// by its socket on their command line) and whatever runs in their cgroups.
func killShims(sock string) error {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		data, _ := os.ReadFile(p)
		if strings.Contains(string(data), "containerd-shim") && strings.Contains(string(data), sock) {
			var pid int
			fmt.Sscanf(strings.Split(p, "/")[2], "%d", &pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return nil
}

// unmountUnder lazily unmounts every mount under dir, deepest first.
func unmountUnder(dir string) error {
	var errs []error
	for _, m := range mountsUnder(dir) {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
		}
	}
	return errors.Join(errs...)
}

// mountsUnder lists the mount points under dir, deepest first.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var ms []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			ms = append(ms, fields[4])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ms)))
	return ms
}

// removeNetns removes the pod network namespaces containerd made in
// /var/run/netns (whatever its root) while the node ran.
func removeNetns(before map[string]bool) error {
	var errs []error
	for ns := range netnsNames() {
		if before[ns] {
			continue
		}
		syscall.Unmount(ns, syscall.MNT_DETACH)
		if err := os.Remove(ns); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// killCgroups kills what still runs in cgroupRoot's tree (a pod whose
// shim was killed) and waits until it is empty: only the node's own
// processes are there.
func killCgroups() error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		pids := cgroupProcs()
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("processes left in %s: %v", cgroupRoot, cgroupProcs())
}

// cgroupProcs are the processes in cgroupRoot's tree, in any hierarchy.
func cgroupProcs() []int {
	var pids []int
	for _, h := range cgroupHierarchies() {
		filepath.WalkDir(filepath.Join(h, cgroupRoot), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.Name() != "cgroup.procs" {
				return nil
			}
			data, _ := os.ReadFile(p)
			for _, f := range strings.Fields(string(data)) {
				var pid int
				if _, err := fmt.Sscan(f, &pid); err == nil && pid > 1 {
					pids = append(pids, pid)
				}
			}
			return nil
		})
	}
	return pids
}

// removeCgroups removes cgroupRoot's tree in every hierarchy, deepest first.
func removeCgroups() error {
	var errs []error
	for _, h := range cgroupHierarchies() {
		var dirs []string
		filepath.WalkDir(filepath.Join(h, cgroupRoot), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := os.Remove(dirs[i]); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// removeChains removes the chains the kubelet makes (KUBE-*) in every
// table, after flushing the rules that jump to them.
func removeChains() {
	for _, table := range []string{"filter", "nat", "mangle"} {
		out, err := exec.Command("iptables-save", "-t", table).Output()
		if err != nil {
			continue
		}
		var chains []string
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, ":KUBE-") {
				chains = append(chains, strings.Fields(line[1:])[0])
			}
			if strings.HasPrefix(line, "-A ") && strings.Contains(line, "-j KUBE-") && !strings.HasPrefix(line, "-A KUBE-") {
				// iptables-save quotes as a shell does.
				exec.Command("sh", "-c", "iptables -t "+table+" -D "+line[len("-A "):]).Run()
			}
		}
		for _, c := range chains {
			exec.Command("iptables", "-t", table, "-F", c).Run()
		}
		for _, c := range chains {
			exec.Command("iptables", "-t", table, "-X", c).Run()
		}
	}
}

// removeLinksInto removes the symbolic links in dir that point under target.
func removeLinksInto(dir, target string) {
	links, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, l := range links {
		if to, err := os.Readlink(l); err == nil && strings.HasPrefix(to, target+"/") {
			os.Remove(l)
		}
	}
}

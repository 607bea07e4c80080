// Package memcg reads lfinit's own memory cgroup: the OOM-kill counter, the
// memory limit and the peak usage, on cgroup v2 and v1, so that lfinit can
// tell whether the kernel's OOM killer killed its child. The kernel kills
// the biggest process of the cgroup, which is the service and not lfinit,
// so a container engine that watches only its PID 1 never sees the kill;
// the cgroup's counter does.
//
// Which cgroup: on v2 the one named by the "0::" line of /proc/self/cgroup,
// whose memory.events counts OOM kills in the whole subtree (since Linux
// 5.2, unless cgroup2 is mounted with memory_localevents), so a child in a
// cgroup below lfinit's is seen too. On v1 (and the hybrid layout, whose v2
// mount has no memory controller) the one on the "memory" line, whose
// memory.oom_control counts only the kills of its own processes (Linux
// 4.13+): a child moved into a cgroup below lfinit's is not seen there.
//
// The limit is the cgroup's own; a limit set only on an ancestor is not
// read (that would take a walk up the tree, and inside a container the
// ancestors are out of sight).
package memcg

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Group is one memory cgroup's directory; the zero Group reads as unknown.
type Group struct {
	dir string
	v1  bool
}

// Find finds the memory cgroup of the calling process under /sys/fs/cgroup.
func Find() (Group, error) {
	return FindIn("/proc/self/cgroup", "/sys/fs/cgroup")
}

// FindIn finds the memory cgroup named in cgroupFile (the format of
// /proc/self/cgroup) under root (where cgroupfs is mounted, /sys/fs/cgroup).
func FindIn(cgroupFile, root string) (Group, error) {
	data, err := readSmall(cgroupFile)
	if err != nil {
		return Group{}, err
	}
	v1path, v2path, err := parseCgroupFile(data)
	if err != nil {
		return Group{}, fmt.Errorf("%s: %w", cgroupFile, err)
	}
	// A v1 memory line wins: in the hybrid layout the v2 hierarchy has no
	// memory controller (the v1 one holds it).
	if v1path != "" {
		dir, err := groupDir(filepath.Join(root, "memory"), v1path)
		return Group{dir: dir, v1: true}, err
	}
	if v2path == "" {
		return Group{}, fmt.Errorf("%s: no memory or cgroup v2 line", cgroupFile)
	}
	for _, mount := range []string{root, filepath.Join(root, "unified")} {
		if exists(filepath.Join(mount, "cgroup.controllers")) {
			dir, err := groupDir(mount, v2path)
			return Group{dir: dir}, err
		}
	}
	return Group{}, fmt.Errorf("no cgroup v2 mount at %s or %s/unified", root, root)
}

// parseCgroupFile returns the path of the v1 memory hierarchy's line and
// the path of the v2 line ("0::"), either "" when absent.
func parseCgroupFile(data []byte) (v1path, v2path string, err error) {
	// Line by line without a bufio.Scanner, whose buffer is fresh heap
	// pages on the start's path.
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		// hierarchy-id:controllers:path; a path may itself hold a colon.
		fields := strings.SplitN(line, ":", 3)
		if len(fields) != 3 || !strings.HasPrefix(fields[2], "/") {
			return "", "", fmt.Errorf("malformed line %q", line)
		}
		switch {
		case fields[0] == "0" && fields[1] == "":
			v2path = fields[2]
		case slices.Contains(strings.Split(fields[1], ","), "memory"):
			v1path = fields[2]
		}
	}
	return v1path, v2path, nil
}

// groupDir is the cgroup's directory under one hierarchy's mount. A path
// that does not exist there is the container case (podman, measured): the
// process's own cgroup is mounted at the hierarchy's root, while
// /proc/self/cgroup names it by its path on the host.
func groupDir(mount, path string) (string, error) {
	if !exists(mount) {
		return "", fmt.Errorf("no cgroup hierarchy mounted at %s", mount)
	}
	// ".." is a cgroup outside this cgroup namespace's root, and " (deleted)"
	// a removed one: neither is in sight, and the root would be a guess.
	if slices.Contains(strings.Split(path, "/"), "..") || strings.HasSuffix(path, " (deleted)") {
		return "", fmt.Errorf("cgroup %q is not visible here", path)
	}
	dir := filepath.Join(mount, path)
	if !exists(dir) {
		dir = mount
	}
	return dir, nil
}

// Dir is the cgroup's directory, "" for the zero Group.
func (g Group) Dir() string { return g.dir }

// Version is the cgroup version read, 1 or 2, 0 for the zero Group.
func (g Group) Version() int {
	switch {
	case g.dir == "":
		return 0
	case g.v1:
		return 1
	}
	return 2
}

// String names the group for a log line.
func (g Group) String() string {
	if g.dir == "" {
		return "no memory cgroup"
	}
	return fmt.Sprintf("cgroup v%d %s", g.Version(), g.dir)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// maxFile bounds every read: the files read here are a few hundred bytes,
// and a larger one is not the file meant (it is then unknown).
const maxFile = 64 << 10

// readSmall reads a whole small file, or fails.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err == nil && len(data) > maxFile {
		err = errors.New(path + ": larger than expected")
	}
	return data, err
}

package reaper

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Proc is one line of the process table, as read from /proc/PID/stat.
type Proc struct {
	Pid, Ppid int
	State     byte   // R, S, D, Z, …
	Start     uint64 // start time in clock ticks since boot: with Pid, an identity
	Comm      string // the command name, as ps shows it
}

// Exited reports whether p had exited when it was read (a zombie).
func (p Proc) Exited() bool { return p.State == 'Z' || p.State == 'X' }

// ParseStat decodes the fields lfinit needs from the text of /proc/PID/stat.
// The command name may hold spaces and parentheses, so fields are counted
// from the last ')'.
func ParseStat(text string) (Proc, bool) {
	open, end := strings.IndexByte(text, '('), strings.LastIndexByte(text, ')')
	if open < 1 || end < open {
		return Proc{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(text[:open]))
	if err != nil {
		return Proc{}, false
	}
	f := strings.Fields(text[end+1:])
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[19] field 22 (starttime).
	if len(f) < 20 || len(f[0]) != 1 {
		return Proc{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return Proc{}, false
	}
	return Proc{Pid: pid, Ppid: ppid, State: f[0][0], Start: start, Comm: text[open+1 : end]}, true
}

// procDir is where the kernel shows the processes of lfinit's PID namespace.
const procDir = "/proc"

// maxDepth bounds how many parents Descends reads: a chain of processes
// deeper than this is not one a service builds.
const maxDepth = 256

// Descends reports whether pid is a process below root (root's pid is
// lfinit's): as its namespace's PID 1 every other process it can see is;
// otherwise pid's parents, read one by one, reach root. The cost is the
// depth of pid, never the size of the host.
func Descends(root, pid int) bool {
	if root == 1 {
		return pid > 1
	}
	for range maxDepth {
		if pid <= 1 || pid == root {
			return false
		}
		p, ok := Read(pid)
		if !ok {
			return false
		}
		if p.Ppid == root {
			return true
		}
		pid = p.Ppid
	}
	return false
}

// Read reads one process; false if it is gone.
func Read(pid int) (Proc, bool) { return ReadIn(procDir, pid) }

// ReadIn reads one process of the /proc mounted at dir; false if it is gone.
func ReadIn(dir string, pid int) (Proc, bool) {
	b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(pid), "stat"))
	if err != nil {
		return Proc{}, false
	}
	return ParseStat(string(b))
}

// Table reads every process of the PID namespace. Its cost is the
// namespace's: lfinit reads it only as the namespace's PID 1.
func Table() []Proc {
	pids := Pids(procDir)
	procs := make([]Proc, 0, len(pids))
	for _, pid := range pids {
		if p, ok := Read(pid); ok {
			procs = append(procs, p)
		}
	}
	return procs
}

// Pids lists the processes the /proc mounted at dir shows (its numeric
// entries). Its cost is every process of that PID namespace.
func Pids(dir string) []int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	pids := make([]int, 0, len(entries))
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Walk returns every process below root, zombies included, found through
// the children lists of root and of each process below it
// (/proc/PID/task/TID/children): its cost is the tree's, whatever else the
// host runs. A process that exits or is re-parented while the walk runs
// may be missed; callers that must reach all repeat the walk. On a kernel
// without children lists it falls back to reading all of /proc.
func Walk(root int) []Proc {
	var out []Proc
	walk(root, func(p Proc) { out = append(out, p) })
	return out
}

// Live returns the processes of procs that had not exited when read.
func Live(procs []Proc) []Proc {
	var live []Proc
	for _, p := range procs {
		if !p.Exited() {
			live = append(live, p)
		}
	}
	return live
}

// Method names how Walk finds a tree on this kernel, for the logs and the
// status file: "children" (each process's children lists) or "proc-scan".
func Method() string {
	if hasChildren() {
		return "children"
	}
	return "proc-scan"
}

// walk calls visit for each process below root, a parent before its
// children: a visitor that signals stops a forking parent before its
// children are read.
func walk(root int, visit func(Proc)) {
	if !hasChildren() {
		for _, p := range Tree(Table(), root) {
			visit(p)
		}
		return
	}
	seen := map[int]bool{root: true}
	queue := []int{root}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, pid := range children(parent) {
			if seen[pid] {
				continue
			}
			// A pid whose parent is another now exited and was re-parented
			// (or was recycled) since the list was read: not visited here.
			p, ok := Read(pid)
			if !ok || p.Ppid != parent {
				continue
			}
			seen[pid] = true
			visit(p)
			queue = append(queue, pid)
		}
	}
}

// children lists the children of pid: those of each of its threads.
func children(pid int) []int {
	dir := filepath.Join(procDir, strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "children"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

var (
	childrenOnce sync.Once
	childrenOK   bool
)

// hasChildren reports whether the kernel keeps children lists
// (CONFIG_PROC_CHILDREN, on in every common distribution's kernel).
func hasChildren() bool {
	childrenOnce.Do(func() {
		tid := strconv.Itoa(os.Getpid())
		_, err := os.Stat(filepath.Join(procDir, tid, "task", tid, "children"))
		childrenOK = err == nil
	})
	return childrenOK
}

// Tree returns every process below root in procs, zombies included.
func Tree(procs []Proc, root int) []Proc {
	children := make(map[int][]Proc, len(procs))
	for _, p := range procs {
		children[p.Ppid] = append(children[p.Ppid], p)
	}
	var out []Proc
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if c.Pid == root {
				continue
			}
			queue = append(queue, c.Pid)
			out = append(out, c)
		}
	}
	return out
}

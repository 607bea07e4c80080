package reaper

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Proc is one line of the process table, as read from /proc/PID/stat.
type Proc struct {
	Pid, Ppid int
	State     byte   // R, S, D, Z, …
	Start     uint64 // start time in clock ticks since boot: with Pid, an identity
	Comm      string // the command name, as ps shows it
}

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

// Table reads every process visible in procDir (normally /proc).
func Table(procDir string) []Proc {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return nil
	}
	procs := make([]Proc, 0, len(entries))
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		if p, ok := readProc(procDir, e.Name()); ok {
			procs = append(procs, p)
		}
	}
	return procs
}

func readProc(procDir, pid string) (Proc, bool) {
	b, err := os.ReadFile(filepath.Join(procDir, pid, "stat"))
	if err != nil {
		return Proc{}, false
	}
	return ParseStat(string(b))
}

// Descendants returns the live (not zombie) processes below root in procs.
func Descendants(procs []Proc, root int) []Proc {
	var live []Proc
	for _, p := range Tree(procs, root) {
		if p.State != 'Z' && p.State != 'X' {
			live = append(live, p)
		}
	}
	return live
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

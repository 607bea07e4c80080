package reaper

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/forward"
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

// SignalTree sends sig to every live process of lfinit's tree and returns
// the ones it signalled. group, when above 1, is the main child's pid, not
// yet reaped: its process group and then the child itself are signalled
// before anything else, so that this cheap, sure reach never waits for a
// scan; what it hit shows in the scan as dying or zombie, and is listed.
// As PID 1 the tree is the whole PID namespace, and kill(-1) reaches all of
// it in one call (the kernel skips the caller). Anywhere else kill(-1)
// would reach the whole machine, so the descendants are found in /proc and
// signalled one by one, each through a pidfd checked to be the process
// found.
func SignalTree(pid1 bool, sig syscall.Signal, group int) []Proc {
	self := os.Getpid()
	if group > 1 {
		forward.Deliver(group, forward.Group, sig)
		forward.Deliver(group, forward.Child, sig)
	}
	if pid1 {
		if err := unix.Kill(-1, sig); err != nil {
			return nil // ESRCH: nothing left to signal
		}
		// Listed after the kill, so the kill is not delayed by the scan;
		// the dying are listed with the live.
		var hit []Proc
		for _, p := range Table("/proc") {
			if p.Pid != self && p.State != 'X' {
				hit = append(hit, p)
			}
		}
		return hit
	}
	var hit []Proc
	for _, p := range Tree(Table("/proc"), self) {
		if p.State == 'Z' || p.State == 'X' || signalExact(p, sig) {
			hit = append(hit, p)
		}
	}
	return hit
}

// signalExact signals p only if the pid still names the process found.
func signalExact(p Proc, sig syscall.Signal) bool {
	fd, err := unix.PidfdOpen(p.Pid, 0)
	if errors.Is(err, unix.ENOSYS) {
		// A kernel older than 5.3: check the identity, then kill by pid.
		if same(p) {
			return unix.Kill(p.Pid, sig) == nil
		}
		return false
	}
	if err != nil {
		return false // gone already
	}
	defer unix.Close(fd)
	// The pidfd pins one process; if it is the one found, signal it.
	if !same(p) {
		return false
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0) == nil
}

// same reports whether p.Pid still names the process p (same start time).
func same(p Proc) bool {
	now, ok := readProc("/proc", strconv.Itoa(p.Pid))
	return ok && now.Start == p.Start
}

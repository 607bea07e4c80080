package supervisor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/light-fabric/lfinit/reaper"
)

// maxPid is the kernel's largest pid_max (PID_MAX_LIMIT on 64-bit).
const maxPid = 1 << 22

// ParsePidfile reads the process id from a pidfile's content: the first
// line, surrounding blanks ignored (PostgreSQL's postmaster.pid has more
// lines after it). The error says what is wrong, for the log.
func ParsePidfile(content []byte) (int, error) {
	text := string(content)
	line, _, _ := strings.Cut(text, "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		if strings.TrimSpace(text) == "" {
			return 0, fmt.Errorf("is empty")
		}
		return 0, fmt.Errorf("has an empty first line, where the process id should be")
	}
	pid, err := strconv.Atoi(line)
	if err != nil {
		if len(line) > 40 {
			line = line[:40] + "…"
		}
		return 0, fmt.Errorf("does not hold a process id (first line %q)", line)
	}
	if pid <= 1 || pid > maxPid {
		return 0, fmt.Errorf("holds %d, which is not the process id of a service (2 to %d)", pid, maxPid)
	}
	return pid, nil
}

// Adoptable checks, on lfinit's tree (the processes below self, whose
// pid is lfinit's), that pid may become the main process of lfinit: a
// live process of the tree and lfinit's own child (a daemon re-parented
// to it), so its exit status reaches lfinit and its pid cannot be
// recycled before lfinit reaps it. read looks up a process outside the
// tree, for the message. It returns "" or what is wrong.
func Adoptable(tree []reaper.Proc, self, pid int, read func(int) (reaper.Proc, bool)) string {
	if pid == self {
		return fmt.Sprintf("names lfinit itself (pid %d)", pid)
	}
	byPid := make(map[int]reaper.Proc, len(tree))
	for _, p := range tree {
		byPid[p.Pid] = p
	}
	p, ok := byPid[pid]
	if !ok {
		if other, found := read(pid); found {
			return fmt.Sprintf("names pid %d (%s), which is not in lfinit's tree: lfinit never follows or signals a process it did not start", pid, other.Comm)
		}
		return fmt.Sprintf("names pid %d, which does not exist", pid)
	}
	switch {
	case p.Exited():
		return fmt.Sprintf("names pid %d (%s), which has exited", pid, p.Comm)
	case p.Ppid != self:
		parent := byPid[p.Ppid]
		return fmt.Sprintf("names pid %d (%s), whose parent %d (%s) still runs: lfinit follows only a daemon re-parented to it (use --wait-for=tree for a daemon kept by a monitor process)",
			pid, p.Comm, p.Ppid, parent.Comm)
	}
	return ""
}

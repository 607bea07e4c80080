package report

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/light-fabric/lfinit/reaper"
	"github.com/light-fabric/lfinit/statusfile"
)

// WriterLiveness is whether the lfinit that wrote a status file still runs.
type WriterLiveness int

// The answers of WriterState.
const (
	WriterAlive   WriterLiveness = iota // the same process still runs
	WriterGone                          // it is gone: the file is stale
	WriterUnknown                       // it cannot be told from here (another PID namespace, no permission)
)

// WriterState says whether the lfinit that wrote s still runs, looking in
// procDir (normally /proc). In the writer's PID namespace (an exec probe
// in the container) the pid is looked up directly; from another one (the
// host), the process is searched by namespace, innermost pid and start
// time. A file without the owner keys (an older lfinit) falls back to the
// pid existing at all.
func WriterState(s statusfile.Status, procDir string) WriterLiveness {
	if s.Pid <= 0 {
		return WriterUnknown
	}
	ownNS, _ := os.Readlink(filepath.Join(procDir, "self/ns/pid"))
	if s.PidNamespace == nil || *s.PidNamespace == ownNS {
		return samePid(s, procDir)
	}
	return searchNamespace(s, procDir)
}

// samePid looks the writer up by its pid, in the reader's own PID namespace.
func samePid(s statusfile.Status, procDir string) WriterLiveness {
	start, ok := startTicks(procDir, s.Pid)
	if !ok || (s.PidStartTicks != nil && *s.PidStartTicks != start) {
		return WriterGone
	}
	return WriterAlive
}

// searchNamespace looks for the writer from outside its PID namespace. It
// needs the start time, and permission to read other processes' namespace
// links (root, or the same user); without them it cannot tell.
func searchNamespace(s statusfile.Status, procDir string) WriterLiveness {
	if s.PidStartTicks == nil {
		return WriterUnknown
	}
	pids := reaper.Pids(procDir)
	if pids == nil {
		return WriterUnknown
	}
	unreadable := false
	for _, pid := range pids {
		if start, ok := startTicks(procDir, pid); !ok || start != *s.PidStartTicks {
			continue // another process, or one that exited meanwhile
		}
		dir := filepath.Join(procDir, strconv.Itoa(pid))
		ns, err := os.Readlink(filepath.Join(dir, "ns/pid"))
		if err != nil {
			unreadable = true
			continue
		}
		if ns == *s.PidNamespace && innermostPid(dir) == s.Pid {
			return WriterAlive
		}
	}
	if unreadable {
		return WriterUnknown
	}
	return WriterGone
}

// innermostPid is the last pid of the NSpid line of /proc/PID/status: the
// process's pid in its own PID namespace.
func innermostPid(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0
			}
			n, _ := strconv.Atoi(f[len(f)-1])
			return n
		}
	}
	return 0
}

// startTicks is when pid started, in clock ticks since boot, as the /proc
// at dir shows it; false when it is gone or a zombie (it has exited).
func startTicks(dir string, pid int) (uint64, bool) {
	p, ok := reaper.ReadIn(dir, pid)
	if !ok || p.Exited() {
		return 0, false
	}
	return p.Start, true
}

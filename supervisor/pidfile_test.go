package supervisor

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/reaper"
)

func TestParsePidfile(t *testing.T) {
	good := map[string]int{
		"42\n":                        42,
		"  42  \n":                    42,
		"42":                          42,
		"42\r\n":                      42,
		"4194304\n":                   4194304,
		"1234\n/var/lib/postgresql\n": 1234, // postmaster.pid: more lines follow
	}
	for in, want := range good {
		if got, err := ParsePidfile([]byte(in)); err != nil || got != want {
			t.Errorf("ParsePidfile(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                       "is empty",
		" \n\n":                  "is empty",
		"\n42\n":                 "empty first line",
		"abc\n":                  "does not hold a process id",
		"42abc\n":                "does not hold a process id",
		"0\n":                    "not the process id of a service",
		"1\n":                    "not the process id of a service",
		"-5\n":                   "not the process id of a service",
		"4194305\n":              "not the process id of a service",
		"99999999999999999999\n": "does not hold a process id",
	}
	for in, want := range bad {
		if _, err := ParsePidfile([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePidfile(%q) error %v, want one containing %q", in, err, want)
		}
	}
}

func FuzzParsePidfile(f *testing.F) {
	for _, seed := range []string{"42\n", "", "abc", "1\n", "12 34\n", "\x00\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pid, err := ParsePidfile(b)
		if err != nil {
			if pid != 0 || err.Error() == "" {
				t.Fatalf("error %v with pid %d", err, pid)
			}
			return
		}
		if pid <= 1 || pid > maxPid {
			t.Fatalf("accepted pid %d", pid)
		}
		first, _, _ := strings.Cut(string(b), "\n")
		if strings.TrimSpace(first) != strconv.Itoa(pid) && strings.TrimLeft(strings.TrimSpace(first), "+0") != strconv.Itoa(pid) {
			t.Fatalf("pid %d is not the first line %q", pid, first)
		}
	})
}

func TestAdoptable(t *testing.T) {
	const self = 100
	procs := []reaper.Proc{
		{Pid: 1, Ppid: 0, State: 'S', Comm: "init"},
		{Pid: self, Ppid: 1, State: 'S', Comm: "lfinit"},
		{Pid: 200, Ppid: self, State: 'S', Comm: "nginx"},       // re-parented daemon
		{Pid: 201, Ppid: 200, State: 'S', Comm: "nginx-worker"}, // its worker
		{Pid: 202, Ppid: self, State: 'Z', Comm: "dead"},
		{Pid: 300, Ppid: 1, State: 'S', Comm: "stranger"},
	}
	cases := map[int]string{
		200:  "",
		201:  "whose parent 200 (nginx) still runs",
		202:  "has exited",
		300:  "not in lfinit's tree",
		1:    "not in lfinit's tree",
		self: "lfinit itself",
		999:  "does not exist",
	}
	for pid, want := range cases {
		got := Adoptable(treeOf(procs, self), self, pid, outside(procs))
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("Adoptable(%d) = %q, want %q", pid, got, want)
		}
	}
}

// treeOf is what reaper.Walk(self) would find on procs.
func treeOf(procs []reaper.Proc, self int) []reaper.Proc { return reaper.Tree(procs, self) }

// outside is a lookup of procs, for the processes Adoptable does not find in the tree.
func outside(procs []reaper.Proc) func(int) (reaper.Proc, bool) {
	return func(pid int) (reaper.Proc, bool) {
		for _, p := range procs {
			if p.Pid == pid {
				return p, true
			}
		}
		return reaper.Proc{}, false
	}
}

func TestCheckPidfile(t *testing.T) {
	tree := []reaper.Proc{{Pid: 4242, Ppid: os.Getpid(), State: 'S', Comm: "daemon"}}
	cases := []struct {
		b       string
		err     error
		pid     int
		problem string
	}{
		{"4242\n", nil, 4242, ""},
		{"", fs.ErrNotExist, 0, "does not exist"},
		{"", fs.ErrPermission, 0, "cannot be read"},
		{"x\n", nil, 0, "does not hold a process id"},
		{"4243\n", nil, 4243, "does not exist"},
	}
	for _, c := range cases {
		pid, problem := checkPidfile([]byte(c.b), c.err, tree, os.Getpid(), outside(nil))
		if (problem == "") != (c.problem == "") || !strings.Contains(problem, c.problem) || (c.problem == "" && pid != c.pid) {
			t.Errorf("checkPidfile(%q, %v) = %d, %q; want %d, %q", c.b, c.err, pid, problem, c.pid, c.problem)
		}
	}
}

// A pidfile on a hung filesystem (here a FIFO nobody writes: open blocks)
// holds up the loop for pidfileReadWait at most, and is never read twice
// at once; once it answers, its content is used.
func TestReadPidfileBoundedDoesNotHang(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pid")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	r := &runner{Config: Config{Options: core.Options{Pidfile: fifo}}}
	for i := range 2 {
		begun := time.Now()
		if _, err := r.readPidfileBounded(); err == nil || !strings.Contains(err.Error(), "hung") {
			t.Fatalf("read %d of a hung pidfile: %v", i, err)
		}
		if took := time.Since(begun); took > time.Second {
			t.Fatalf("read %d held the loop for %v", i, took)
		}
	}
	first := r.pidfile.pending
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("4242\n")
	w.Close()
	var b []byte
	waitUntil := time.Now().Add(5 * time.Second)
	for err = errors.New("not yet"); err != nil && time.Now().Before(waitUntil); {
		if r.pidfile.pending != nil && r.pidfile.pending != first {
			t.Fatal("a second read was started while the first hung")
		}
		b, err = r.readPidfileBounded()
	}
	if err != nil || string(b) != "4242\n" {
		t.Fatalf("after the writer came: %q, %v", b, err)
	}
}

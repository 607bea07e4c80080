package supervisor

import (
	"strconv"
	"strings"
	"testing"

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
		got := Adoptable(procs, self, pid)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("Adoptable(%d) = %q, want %q", pid, got, want)
		}
	}
}

package spawn

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/exitcode"
)

// The test binary links package step, so it is its own exec step, as
// lfinit is.

func TestListenFDs(t *testing.T) {
	for _, tc := range []struct {
		env []string
		n   int
		ok  bool
	}{
		{[]string{"LISTEN_PID=7", "LISTEN_FDS=2"}, 2, true},
		{[]string{"LISTEN_PID=7", "LISTEN_FDS=0"}, 0, true},
		{[]string{"LISTEN_PID=8", "LISTEN_FDS=2"}, 0, false},
		{[]string{"LISTEN_FDS=2"}, 0, false},
		{[]string{"LISTEN_PID=7"}, 0, false},
		{[]string{"LISTEN_PID=7", "LISTEN_FDS=-1"}, 0, false},
		{[]string{"LISTEN_PID=7", "LISTEN_FDS=x"}, 0, false},
	} {
		if n, ok := ListenFDs(tc.env, 7); n != tc.n || ok != tc.ok {
			t.Errorf("%v: %d %v, want %d %v", tc.env, n, ok, tc.n, tc.ok)
		}
	}
}

// runStep starts argv through the exec step and waits for it.
func runStep(t *testing.T, env []string, argv ...string) (int, int, error) {
	t.Helper()
	pid, err := Start(argv, Options{Env: env, ListenPID: true})
	if err != nil {
		return 0, 0, err
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	return pid, ws.ExitStatus(), nil
}

// TestExecStepSetsListenPID: the command sees LISTEN_PID = its own pid,
// the rest of the environment in its order, and no descriptor of the step.
func TestExecStepSetsListenPID(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	env := []string{"PATH=/usr/bin:/bin", "LISTEN_FDS=0", "LISTEN_PID=1", "LISTEN_FDNAMES=x"}
	// What go test leaves open does not reach the command, as in lfinit.
	if err := CloseInheritedFDs(0); err != nil {
		t.Fatal(err)
	}
	pid, code, err := runStep(t, env, "sh", "-c", `echo "$$ $(env | grep ^LISTEN_ | tr '\n' ' ')$(ls /proc/self/fd | tr '\n' ,)" > `+out)
	if err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	b, _ := os.ReadFile(out)
	f := strings.Fields(string(b))
	if len(f) != 5 || f[0] != strconv.Itoa(pid) || f[1] != "LISTEN_FDS=0" || f[2] != "LISTEN_PID="+strconv.Itoa(pid) || f[3] != "LISTEN_FDNAMES=x" {
		t.Fatalf("the command saw %q, want its pid %d as LISTEN_PID, the rest unchanged", b, pid)
	}
	// 0, 1, 2 and the one ls opens for the directory.
	if f[4] != "0,1,2,3," {
		t.Errorf("the command had descriptors %s, want 0,1,2 and ls's own 3 (the step's status pipe must be closed)", f[4])
	}
}

// TestExecStepFailures: through the step, a missing or non-executable
// command and a script without #! fare as without it.
func TestExecStepFailures(t *testing.T) {
	dir := t.TempDir()
	plain, script := filepath.Join(dir, "plain"), filepath.Join(dir, "legacy")
	os.WriteFile(plain, []byte("x"), 0o644)
	os.WriteFile(script, []byte("exit 42\n"), 0o755)
	env := []string{"PATH=/usr/bin:/bin", "LISTEN_PID=1", "LISTEN_FDS=0"}
	for _, tc := range []struct {
		cmd  string
		code int
		msg  string
	}{{dir + "/nope", exitcode.NotFound, "no such file"}, {plain, exitcode.NotExec, "permission denied"}, {dir, exitcode.NotExec, "directory"}} {
		_, _, err := runStep(t, env, tc.cmd)
		var e *Error
		if !errors.As(err, &e) || e.Code != tc.code || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("%q: %v, want code %d saying %q", tc.cmd, err, tc.code, tc.msg)
		}
	}
	if _, code, err := runStep(t, env, script); err != nil || code != 42 {
		t.Errorf("script without #!: exit %d, %v; want 42 from /bin/sh", code, err)
	}
}

func TestInheritedFDs(t *testing.T) {
	r, w, err := os.Pipe() // close-on-exec, as Go opens everything
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	fd, err := unix.Dup(int(w.Fd())) // no close-on-exec: as if inherited
	if err != nil {
		t.Fatal(err)
	}
	got := InheritedFDs()
	CloseFDs([]int{fd})
	for _, f := range got {
		if f == int(r.Fd()) || f == int(w.Fd()) {
			t.Errorf("descriptor %d of lfinit's own (close-on-exec) counted as inherited", f)
		}
	}
	if !slices.Contains(got, fd) {
		t.Errorf("inherited %v, want %d among them", got, fd)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
		t.Errorf("descriptor %d still open after CloseFDs", fd)
	}
}

package spawn

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// run starts argv and waits for it; only this test waits on its children.
func run(t *testing.T, argv ...string) (int, error) {
	t.Helper()
	pid, err := Start(argv, Options{Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		return 0, err
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	return ws.ExitStatus(), nil
}

func TestScriptWithoutShebangRunsWithSh(t *testing.T) {
	dir := t.TempDir()
	script, out := filepath.Join(dir, "legacy"), filepath.Join(dir, "out")
	os.WriteFile(script, []byte("echo \"$0 $1 $2\" > "+out+"\nexit 42\n"), 0o755)
	code, err := run(t, script, "a", "b c")
	if err != nil || code != 42 {
		t.Fatalf("exit %d, %v; want 42 from the script", code, err)
	}
	if b, _ := os.ReadFile(out); string(b) != script+" a b c\n" {
		t.Fatalf("script saw %q, want its path and arguments as execvp gives them", b)
	}
}

func TestScriptWithoutShebangAndNoShell(t *testing.T) {
	defer func(s string) { shell = s }(shell)
	shell = "/nonexistent/sh"
	script := filepath.Join(t.TempDir(), "legacy")
	os.WriteFile(script, []byte("exit 0\n"), 0o755)
	_, err := run(t, script)
	var e *Error
	if !errors.As(err, &e) || e.Code != ExitNotExec || !strings.Contains(e.Msg, "#! line") || !strings.Contains(e.Msg, "/nonexistent/sh") {
		t.Fatalf("got %v, want a 126 that says to add a #! line and that there is no shell", err)
	}
}

func TestNotFoundAndNotExecutable(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("x"), 0o644)
	for _, tc := range []struct {
		cmd  string
		code int
	}{{"no-such-program-xyz", ExitNotFound}, {plain, ExitNotExec}, {dir, ExitNotExec}, {"", ExitNotFound}} {
		_, err := run(t, tc.cmd)
		var e *Error
		if !errors.As(err, &e) || e.Code != tc.code {
			t.Errorf("%q: %v, want code %d", tc.cmd, err, tc.code)
		}
	}
}

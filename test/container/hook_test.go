package container

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestShutdownHook: in a FROM scratch image, a hook given as a JSON array
// in LFINIT_ON_SHUTDOWN runs at podman stop before the child gets its
// TERM, which waits for the hook's 300ms; lfinit exits with the child's
// code and logs the hook's success.
func TestShutdownHook(t *testing.T) {
	t.Parallel()
	hook := `["/helper","-record","/rec/record","-exit","0","-after","300ms"]`
	c := run(t, baseImage, []string{"--env", "LFINIT_ON_SHUTDOWN=" + hook, "--env", "LFINIT_ON_SHUTDOWN_TIMEOUT=2s"}, helperArgs()...)
	c.waitFile("ready")
	if took := c.stop(10); took.exited > 5*time.Second {
		t.Fatalf("podman stop: %v", took)
	}
	checkExit(t, c, "graceful", 143)
	rec, err := os.ReadFile(c.path("record"))
	if err != nil {
		t.Fatal(err)
	}
	// One append-only record: the hook's start and exit come before the child's TERM.
	text := string(rec)
	hookExit, term := strings.Index(text, "\nexit 0 "), strings.Index(text, "\nsignal 15 ")
	if hookExit < 0 || term < 0 || hookExit > term {
		t.Fatalf("want the hook's exit before the child's TERM:\n%s", text)
	}
	if _, ok := find(c.lfinitLog(), "shutdown hook ended", "outcome", "succeeded", "exit_code", "0"); !ok {
		t.Fatal("no log line of the hook's success")
	}
}

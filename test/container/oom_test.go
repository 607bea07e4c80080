package container

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/light-fabric/lfinit/statusfile"
)

// TestOOMKillIsNamed: in a container limited to 64 MiB, the service takes
// memory until the kernel's OOM killer ends it. lfinit, small, survives;
// podman then cannot tell (its PID 1 lived), so lfinit says it: exit 137
// as the service's, cause oom-kill with the cgroup's limit and peak in the
// status file, the exit line and the termination message.
func TestOOMKillIsNamed(t *testing.T) {
	// conmon writes a file named oom into its working directory, which is
	// podman's, when the kernel OOM-kills a process of the container: the
	// test's own temp dir, not the source tree.
	t.Chdir(t.TempDir())
	c := run(t, baseImage, []string{"--memory=64m", "--memory-swap=64m"},
		"--status-file", "/rec/status.json", "--termination-log", "/rec/termlog", "--", "/bin/alloc")
	podman(t, "wait", c.name)
	if code := c.exitCode(); code != 137 {
		t.Fatalf("exit %d, want the service's 137", code)
	}
	t.Logf("podman's own word: OOMKilled=%s", strings.TrimSpace(podman(t, "inspect", "--format", "{{.State.OOMKilled}}", c.name)))
	b, err := os.ReadFile(c.path("status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s statusfile.Status
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("status file: %v\n%s", err, b)
	}
	if s.Cause == nil || *s.Cause != statusfile.CauseOOMKill {
		t.Fatalf("cause %v, want oom-kill\n%s", s.Cause, b)
	}
	if s.MemoryLimitBytes == nil || *s.MemoryLimitBytes != 64<<20 {
		t.Errorf("memory limit %v, want 64 MiB", s.MemoryLimitBytes)
	}
	if l := c.exitLine(); l.str("cause") != "oom-kill" || l.str("level") != "WARN" {
		t.Errorf("exit line %v, want a WARN with cause oom-kill", l)
	}
	msg, _ := os.ReadFile(c.path("termlog"))
	if !strings.Contains(string(msg), "killed by the kernel's OOM killer: ") {
		t.Errorf("termination message does not name the OOM kill: %q", msg)
	}
}

package container

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/statusfile"
)

// TestNotifyUnderPodman: --ready-notify in a FROM scratch image under
// podman (a network namespace of its own, --network none): the helper's
// READY=1 and STATUS= reach the status file through the abstract socket.
func TestNotifyUnderPodman(t *testing.T) {
	needPodman(t)
	c := run(t, baseImage, nil, lfinitArgs([]string{"--ready-notify", "abstract", "--status-file", "/rec/status.json"},
		"-notify", `READY=1\nSTATUS=serving in podman`)...)
	c.waitFile("ready")
	var s statusfile.Status
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(c.path("status.json"))
		if err == nil && json.Unmarshal(b, &s) == nil && s.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready: %s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s.ServiceStatus == nil || *s.ServiceStatus != "serving in podman" {
		t.Fatalf("service status %v", s.ServiceStatus)
	}
	c.stop(10)
	checkExit(t, c, "graceful", 143)
}

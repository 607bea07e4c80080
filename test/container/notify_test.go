package container

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/notify"
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

// TestNotifyBridgeThroughPodman: podman run --sdnotify=container gives
// the container a notify socket of podman's; lfinit, with --ready-notify,
// passes the service's READY=1 up through it, and podman on to its own
// NOTIFY_SOCKET (here the test's, as a systemd unit running the container
// would have), with the container's MAINPID.
func TestNotifyBridgeThroughPodman(t *testing.T) {
	needPodman(t)
	// A path, as systemd gives it: with an abstract one, podman 4.3
	// passed nothing on to the test.
	host, err := notify.Listen(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	heard := make(chan notify.Datagram, 16)
	go host.Serve(heard, func(int) bool { return true })
	t.Setenv("NOTIFY_SOCKET", host.Addr())
	c := run(t, baseImage, []string{"--sdnotify=container"}, lfinitArgs([]string{"--ready-notify", "abstract"},
		"-notify", `READY=1\nSTATUS=warm`)...)
	for ready := false; !ready; {
		select {
		case d := <-heard:
			ready = d.Msg.Has(notify.KindReady)
		case <-time.After(60 * time.Second):
			t.Fatal("podman passed no READY=1 up")
		}
	}
	c.stop(10)
	checkExit(t, c, "graceful", 143)
}

package container

import "testing"

// TestDaemonizingServiceUnderPodman: an init.d-style service in a
// container (the start command double-forks, exits 0, and the daemon
// writes its pidfile half a second later) is followed through --pidfile;
// podman stop reaches the daemon, and its exit code is the container's.
func TestDaemonizingServiceUnderPodman(t *testing.T) {
	c := run(t, baseImage, nil, "--pidfile", "/rec/daemon.pid", "--",
		"/helper", "-record", "/rec/record", "-daemon", "/rec/daemon.pid", "-daemon-pidfile-delay", "500ms", "-daemon-term-exit", "7", "-exit", "0")
	c.waitFile("daemon.pid")
	c.waitRecord("daemon-start ")
	c.stop(10)
	checkExit(t, c, "graceful", 7)
	if !c.recorded("daemon-signal 15 ") {
		t.Errorf("podman stop's TERM never reached the daemon")
	}
}

// TestWaitForTreeUnderPodman: with --wait-for=tree the container lives as
// long as the daemon, and podman stop ends it with the daemon's code.
func TestWaitForTreeUnderPodman(t *testing.T) {
	c := run(t, baseImage, nil, "--wait-for=tree", "--",
		"/helper", "-record", "/rec/record", "-daemon", "/rec/daemon.pid", "-daemon-term-exit", "9", "-exit", "0")
	c.waitFile("daemon.pid")
	c.waitRecord("exit 0 ")
	c.stop(10)
	checkExit(t, c, "graceful", 9)
}

package container

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
)

// TestSocketActivationUnderPodman: podman run --preserve-fds=1 with a
// listening socket on podman's descriptor 3, and the variables podman
// sets in a socket-activated unit (LISTEN_FDS=1, LISTEN_PID=1: lfinit,
// the container's PID 1). The helper under lfinit accepts a connection on
// it by sd_listen_fds(3)'s rules (LISTEN_PID its own pid, the socket on 3);
// with LISTEN_PID naming another pid, nothing is passed or changed.
func TestSocketActivationUnderPodman(t *testing.T) {
	needPodman(t)
	for _, tc := range []struct {
		name, listenPID, fd3 string
	}{{"names-lfinit", "1", "listening"}, {"names-another", "99999", "none"}} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			f, err := l.(*net.TCPListener).File()
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			c := runFiles(t, baseImage, []*os.File{f},
				[]string{"--preserve-fds", "1", "--env", "LISTEN_FDS=1", "--env", "LISTEN_PID=" + tc.listenPID, "--env", "LISTEN_FDNAMES=web"},
				helperArgs("-activation", "/rec/activation")...)
			c.waitFile("ready")
			a := map[string]string{}
			b, _ := os.ReadFile(c.path("activation"))
			for _, kv := range strings.Fields(string(b)) {
				k, v, _ := strings.Cut(kv, "=")
				a[k] = v
			}
			wantPID := tc.listenPID
			if tc.name == "names-lfinit" {
				wantPID = a["pid"]
			}
			if a["listen_pid"] != wantPID || a["listen_fds"] != "1" || a["listen_fdnames"] != "web" || a["fd3"] != tc.fd3 {
				t.Fatalf("the helper saw %v, want LISTEN_PID=%s and descriptor 3 %s", a, wantPID, tc.fd3)
			}
			if tc.name == "names-lfinit" {
				if got, err := measure.FirstLine(l.Addr().String(), 10*time.Second); err != nil || got != "hello from "+a["pid"] {
					t.Fatalf("the socket answered %q (%v), want the helper's hello", got, err)
				}
			}
			c.stop(10)
			checkExit(t, c, "graceful", 143)
		})
	}
}

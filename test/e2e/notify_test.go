package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/light-fabric/lfinit/notify"
	"github.com/light-fabric/lfinit/statusfile"
)

// needProgram skips a test whose real program is not installed.
func needProgram(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed (scripts/install-deps installs it)", name)
	}
}

// waitStatus waits until the status file at path satisfies ok.
func waitStatus(t *testing.T, path, what string, ok func(statusfile.Status) bool) statusfile.Status {
	t.Helper()
	var s statusfile.Status
	waitFor(t, 30*time.Second, what, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(b, &s) != nil {
			return false
		}
		return ok(s)
	})
	return s
}

// notifyScript is a service that says its readiness with Debian's
// systemd-notify, each step held until the test creates a file: READY=1
// with a status (the barrier included), RELOADING=1, READY=1 again, then
// STOPPING=1, recording each systemd-notify's exit code.
const notifyScript = `
d=$0
step() { while [ ! -e "$d/$1" ]; do sleep 0.02; done; }
touch "$d/started"
step go
systemd-notify --ready --status="Serving 3 workers" ERRNO=5 BUSERROR=org.example.Error.Busy; echo $? > "$d/rc-ready"
step reload
systemd-notify RELOADING=1; echo $? > "$d/rc-reloading"
step reloaded
systemd-notify --ready; echo $? > "$d/rc-reloaded"
step stop
systemd-notify STOPPING=1; echo $? > "$d/rc-stopping"
step exit
`

// rc waits for the exit code systemd-notify left in the file name.
func (r *run) rc(name string) string {
	r.t.Helper()
	r.waitFile(name)
	var b []byte
	waitFor(r.t, 10*time.Second, name+" written", func() bool {
		b, _ = os.ReadFile(r.path(name))
		return strings.HasSuffix(string(b), "\n")
	})
	return strings.TrimSpace(string(b))
}

// TestNotifySystemdNotify: a shell script that says its readiness with
// systemd-notify, under lfinit as PID 1. The phase stays starting until
// READY=1; RELOADING=1 and STOPPING=1 take the readiness back; the
// barrier returns at once (systemd-notify fails after 5 s when the
// receiver keeps its descriptor).
func TestNotifySystemdNotify(t *testing.T) {
	needProgram(t, "systemd-notify")
	t.Parallel()
	r := startPID1(t, "--ready-notify", "abstract", "--status-file", "DIR/status.json", "--termination-log", "DIR/termlog", "--", "sh", "-c", notifyScript, "DIR")
	status := r.path("status.json")
	r.waitFile("started")
	s := waitStatus(t, status, "the first status", func(s statusfile.Status) bool { return s.ServiceState != nil })
	if s.Phase != statusfile.Starting || s.Ready || *s.ServiceState != "starting" {
		t.Fatalf("before READY=1: phase %s ready %v service %s", s.Phase, s.Ready, *s.ServiceState)
	}
	if code := probe(t, "ready", status); code != 1 {
		t.Fatalf("probe ready before READY=1: exit %d", code)
	}
	os.WriteFile(r.path("go"), nil, 0o644)
	if rc := r.rc("rc-ready"); rc != "0" {
		t.Fatalf("systemd-notify --ready exit %s (the barrier waits until lfinit closes its descriptor)", rc)
	}
	s = waitStatus(t, status, "ready", func(s statusfile.Status) bool { return s.Ready })
	if s.Phase != statusfile.Ready || s.ServiceStatus == nil || *s.ServiceStatus != "Serving 3 workers" {
		t.Fatalf("after READY=1: phase %s status %v", s.Phase, s.ServiceStatus)
	}
	if s.ServiceErrno == nil || *s.ServiceErrno != 5 || s.ServiceBusError == nil || *s.ServiceBusError != "org.example.Error.Busy" {
		t.Fatalf("ERRNO=5 and BUSERROR= not recorded: errno %v buserror %v", s.ServiceErrno, s.ServiceBusError)
	}
	if out, _ := exec.Command(lfinitBin, "status", "--status-file", status).Output(); !strings.Contains(string(out), "status:     Serving 3 workers\n") ||
		!strings.Contains(string(out), "buserror:   org.example.Error.Busy\n") {
		t.Fatalf("lfinit status does not show the service's status:\n%s", out)
	}
	step := func(file, rcFile, state string, ready bool) {
		t.Helper()
		os.WriteFile(r.path(file), nil, 0o644)
		if rc := r.rc(rcFile); rc != "0" {
			t.Fatalf("%s: systemd-notify exit %s", rcFile, rc)
		}
		s := waitStatus(t, status, "service "+state, func(s statusfile.Status) bool { return *s.ServiceState == state })
		if s.Ready != ready || s.Phase != statusfile.Ready {
			t.Fatalf("service %s: phase %s ready %v, want ready %v", state, s.Phase, s.Ready, ready)
		}
		want := 1
		if ready {
			want = 0
		}
		if code := probe(t, "ready", status); code != want {
			t.Fatalf("service %s: probe ready exit %d, want %d", state, code, want)
		}
	}
	step("reload", "rc-reloading", "reloading", false)
	step("reloaded", "rc-reloaded", "ready", true)
	step("stop", "rc-stopping", "stopping", false)
	os.WriteFile(r.path("exit"), nil, 0o644)
	if code := r.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(r.stderr.String(), "outcome=child-exited") {
		t.Fatalf("the service's own stop is not child-exited:\n%s", r.stderr.String())
	}
	if msg, _ := os.ReadFile(r.path("termlog")); !strings.Contains(string(msg), "; service status: Serving 3 workers") {
		t.Fatalf("termination message %q lacks the service's status", msg)
	}
}

// floodScript sends, from lfinit's tree, garbage of every sort (NUL
// bytes, a datagram over the limit, lines without =, a bad READY) as fast
// as the socket takes it, then READY=1, and waits for the test.
const floodScript = `
import os, socket, sys, time
d, n = sys.argv[1], int(sys.argv[2])
def step(name):
    while not os.path.exists(d + "/" + name):
        time.sleep(0.02)
addr = os.environ["NOTIFY_SOCKET"]
if addr.startswith("@"):
    addr = "\0" + addr[1:]
open(d + "/sock.tmp", "w").write(os.environ["NOTIFY_SOCKET"])
os.rename(d + "/sock.tmp", d + "/sock")
step("go")
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
junk = [b"READY=1\0", b"A" * 5000, b"no equals", b"READY=0", b"\xff=1"]
for i in range(n):
    s.sendto(junk[i % len(junk)], addr)
s.sendto(b"READY=1\nSTATUS=flood survived", addr)
step("exit")
`

// TestNotifyStrangersAndGarbage: a message from outside lfinit's tree
// (this test, in another PID namespace) is ignored and counted; a flood
// of garbage from the tree is counted line by line, never a crash, and
// the READY=1 that follows it still counts.
func TestNotifyStrangersAndGarbage(t *testing.T) {
	needProgram(t, "python3")
	t.Parallel()
	const n = 20000
	r := startPID1(t, "--ready-notify", "abstract", "--status-file", "DIR/status.json", "--metrics-addr", "127.0.0.1:0",
		"--", "python3", "-c", floodScript, "DIR", "20000")
	addr := r.metricsAddr()
	r.waitFile("sock")
	sock, _ := os.ReadFile(r.path("sock"))
	if !strings.HasPrefix(string(sock), "@lfinit-notify-") {
		t.Fatalf("NOTIFY_SOCKET=%q", sock)
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Sendto(fd, []byte("READY=1"), 0, &unix.SockaddrUnix{Name: string(sock)}); err != nil {
		t.Fatal(err)
	}
	metric := func(kind string) string {
		_, body := get(t, "http://"+addr+"/metrics")
		return metricValue(body, `lfinit_notify_messages_total{kind="`+kind+`"}`)
	}
	waitFor(t, 30*time.Second, "the stranger counted", func() bool { return metric("outside") == "1" })
	if s := readStatus(t, r.path("status.json")); s.Phase != statusfile.Starting || metric("ready") != "0" {
		t.Fatalf("a stranger's READY=1 made lfinit %s (ready lines %s)", s.Phase, metric("ready"))
	}
	os.WriteFile(r.path("go"), nil, 0o644)
	s := waitStatus(t, r.path("status.json"), "ready after the flood", func(s statusfile.Status) bool { return s.Ready })
	if s.ServiceStatus == nil || *s.ServiceStatus != "flood survived" {
		t.Fatalf("status %v", s.ServiceStatus)
	}
	if got := metric("garbage"); got != "20000" {
		t.Fatalf("garbage lines %s, want %d (every junk datagram counted once)", got, n)
	}
	if got := metric("ready"); got != "1" {
		t.Fatalf("ready lines %s, want 1", got)
	}
	os.WriteFile(r.path("exit"), nil, 0o644)
	if code := r.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestNotifyOffOpensNothing: without --ready-notify the child's
// environment keeps lfinit's parent's NOTIFY_SOCKET as it is, and with
// it the child gets lfinit's own socket instead.
func TestNotifyOffOpensNothing(t *testing.T) {
	t.Parallel()
	r := startWith(t, false, []string{"--", "sh", "-c", `echo "$NOTIFY_SOCKET" > "$0/sock"`, "DIR"}, []string{"NOTIFY_SOCKET=/run/host.sock"})
	if code := r.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if b, _ := os.ReadFile(r.path("sock")); string(b) != "/run/host.sock\n" {
		t.Fatalf("without --ready-notify the child got NOTIFY_SOCKET=%q", b)
	}
	r = startWith(t, false, []string{"--ready-notify", "DIR", "--", "sh", "-c", `echo "$NOTIFY_SOCKET" > "$0/sock"; systemd-notify --ready 2>/dev/null || true`, "DIR"}, []string{"NOTIFY_SOCKET=/run/host.sock"})
	if code := r.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if b, _ := os.ReadFile(r.path("sock")); string(b) != r.path("notify.sock")+"\n" {
		t.Fatalf("with --ready-notify DIR the child got NOTIFY_SOCKET=%q", b)
	}
	if _, err := os.Stat(r.path("notify.sock")); !os.IsNotExist(err) {
		t.Fatalf("the socket was left behind: %v", err)
	}
}

// TestNotifyWatchdogMissed: a service that feeds the watchdog, then stops
// feeding it. lfinit is live while it is fed; after one interval without
// WATCHDOG=1, /livez, lfinit probe live and the status file say it is
// not; a WATCHDOG=1 afterwards makes it live again. The child gets
// WATCHDOG_USEC and WATCHDOG_PID, its own pid.
func TestNotifyWatchdogMissed(t *testing.T) {
	needProgram(t, "systemd-notify")
	t.Parallel()
	r := startPID1(t, "--ready-notify", "abstract", "--watchdog", "1s", "--status-file", "DIR/status.json", "--metrics-addr", "127.0.0.1:0",
		"--", "sh", "-c", `echo "$WATCHDOG_USEC $WATCHDOG_PID $$" > "$0/env.tmp" && mv "$0/env.tmp" "$0/env"
systemd-notify --ready
for i in 1 2 3 4 5; do systemd-notify WATCHDOG=1; sleep 0.2; done
touch "$0/quiet"
while [ ! -e "$0/feed" ]; do sleep 0.02; done
while [ ! -e "$0/exit" ]; do systemd-notify WATCHDOG=1; sleep 0.1; done`, "DIR")
	addr, status := r.metricsAddr(), r.path("status.json")
	r.waitFile("env")
	env, _ := os.ReadFile(r.path("env"))
	if f := strings.Fields(string(env)); len(f) != 3 || f[0] != "1000000" || f[1] != f[2] {
		t.Fatalf("child's WATCHDOG_USEC WATCHDOG_PID $$: %q", env)
	}
	waitStatus(t, status, "ready", func(s statusfile.Status) bool { return s.Ready })
	if code, _ := get(t, "http://"+addr+"/livez"); code != 200 && !fileExists(r.path("quiet")) {
		t.Fatalf("/livez %d while the watchdog is fed", code)
	}
	r.waitFile("quiet")
	s := waitStatus(t, status, "the watchdog missed", func(s statusfile.Status) bool { return s.WatchdogMissedAt != nil })
	// The snapshot that says so was taken when lfinit saw the miss: within
	// a tenth of the interval of the deadline.
	if late := s.UpdatedAt.Sub(*s.WatchdogMissedAt); late < 0 || late > 100*time.Millisecond {
		t.Fatalf("the miss at %v was published at %v: %v late", *s.WatchdogMissedAt, s.UpdatedAt, late)
	}
	if code, _ := get(t, "http://"+addr+"/livez"); code != 503 {
		t.Fatalf("/livez %d with the watchdog missed", code)
	}
	if code := probe(t, "live", status); code != 1 {
		t.Fatalf("probe live exit %d with the watchdog missed", code)
	}
	if _, body := get(t, "http://"+addr+"/metrics"); metricValue(body, "lfinit_watchdog_missed") != "1" {
		t.Fatal("lfinit_watchdog_missed is not 1")
	}
	if s.Phase != statusfile.Ready {
		t.Fatalf("a missed watchdog without --watchdog-action moved the phase to %s", s.Phase)
	}
	os.WriteFile(r.path("feed"), nil, 0o644)
	waitStatus(t, status, "the watchdog fed again", func(s statusfile.Status) bool { return s.WatchdogMissedAt == nil })
	if code := probe(t, "live", status); code != 0 {
		t.Fatalf("probe live exit %d once the watchdog is fed again", code)
	}
	os.WriteFile(r.path("exit"), nil, 0o644)
	if code := r.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestNotifyWatchdogTriggerStops: WATCHDOG=trigger with
// --watchdog-action=stop begins lfinit's own bounded shutdown, reason
// watchdog: the child gets the stop signal and its graceful exit is
// lfinit's.
func TestNotifyWatchdogTriggerStops(t *testing.T) {
	needProgram(t, "systemd-notify")
	t.Parallel()
	r := startPID1(t, "--ready-notify", "abstract", "--watchdog", "1h", "--watchdog-action", "stop", "--status-file", "DIR/status.json",
		"--", "sh", "-c", `trap 'echo TERM > "$0/got"; exit 0' TERM
systemd-notify --ready
systemd-notify WATCHDOG=trigger
while :; do sleep 0.05; done`, "DIR")
	if code := r.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stderr.String())
	}
	s := readStatus(t, r.path("status.json"))
	if s.Reason == nil || *s.Reason != "watchdog" || s.Signal != nil || s.Outcome == nil || *s.Outcome != statusfile.Graceful {
		t.Fatalf("reason %v signal %v outcome %v", s.Reason, s.Signal, s.Outcome)
	}
	if got, _ := os.ReadFile(r.path("got")); string(got) != "TERM\n" {
		t.Fatalf("the child got %q", got)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestNotifyBridgeUpward: lfinit given a NOTIFY_SOCKET of its own (podman
// --sdnotify=container, a systemd unit) tells it READY=1 once the
// service said READY=1, with the service's status, and STOPPING=1 when
// its shutdown begins; the child never sees that socket.
func TestNotifyBridgeUpward(t *testing.T) {
	needProgram(t, "systemd-notify")
	t.Parallel()
	host, err := notify.Listen(notify.Abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	heard := make(chan notify.Datagram, 16)
	go host.Serve(heard, func(int) bool { return true })
	r := startWith(t, true, []string{"--ready-notify", "abstract", "--", "sh", "-c", `trap 'exit 0' TERM
echo "$NOTIFY_SOCKET" > "$0/sock"
systemd-notify --ready --status="warm"
while :; do sleep 0.05; done`, "DIR"}, []string{"NOTIFY_SOCKET=" + host.Addr()})
	until := func(k notify.Kind) notify.Message {
		t.Helper()
		for {
			select {
			case d := <-heard:
				if d.Msg.Has(k) {
					return d.Msg
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("no %s from lfinit", k)
			}
		}
	}
	if m := until(notify.KindReady); m.Status != "lfinit: ready: warm" {
		t.Fatalf("READY=1 with status %q", m.Status)
	}
	if sock, _ := os.ReadFile(r.path("sock")); strings.TrimSpace(string(sock)) == host.Addr() {
		t.Fatal("the child got lfinit's own NOTIFY_SOCKET")
	}
	r.signal(syscall.SIGTERM)
	until(notify.KindStopping)
	if code := r.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestNotifyMainPIDHandOver: a start script that starts its daemon in the
// background, names it with MAINPID= and exits: lfinit follows the daemon
// (its exit no longer ends the run), and the shutdown's signal reaches it.
func TestNotifyMainPIDHandOver(t *testing.T) {
	needProgram(t, "systemd-notify")
	t.Parallel()
	r := startPID1(t, "--ready-notify", "abstract", "--status-file", "DIR/status.json",
		"--", "sh", "-c", `sleep 1000 & echo $! > "$0/daemon.tmp" && mv "$0/daemon.tmp" "$0/daemon"; systemd-notify --ready --pid=$!; exit 3`, "DIR")
	r.waitFile("daemon")
	b, _ := os.ReadFile(r.path("daemon"))
	daemon := strings.TrimSpace(string(b))
	waitStatus(t, r.path("status.json"), "the daemon followed", func(s statusfile.Status) bool {
		return s.Ready && s.ChildPid != nil && fmt.Sprint(*s.ChildPid) == daemon
	})
	r.waitLog("following MAINPID")
	r.signal(syscall.SIGTERM)
	if code := r.wait(30 * time.Second); code != 143 {
		t.Fatalf("exit %d, want the daemon's 143 (SIGTERM)", code)
	}
	if s := readStatus(t, r.path("status.json")); s.Outcome == nil || *s.Outcome != statusfile.Graceful {
		t.Fatalf("outcome %v", s.Outcome)
	}
}

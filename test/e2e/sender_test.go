package e2e

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/statusfile"
)

// The records say who sent the stop (si_pid, si_uid of the first shutdown
// signal): a process of lfinit's PID namespace by pid and command, one
// outside it (the engine, the kubelet) as such.

// TestSenderOutsideThePIDNamespace: the test, outside lfinit's namespace,
// sends TERM; the kernel shows lfinit pid 0.
func TestSenderOutsideThePIDNamespace(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--status-file", "DIR/status.json", "--termination-log", "DIR/termlog", "HELPER", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	r.signal(syscall.SIGTERM)
	if got := r.wait(10 * time.Second); got != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit %d, want the helper's 143\n%s", got, r.stderr.String())
	}
	s := readStatus(t, r.path("status.json"))
	if got := senderOf(s); got != "outside-pid-namespace pid=<nil> uid=0 command=<nil>" {
		t.Errorf("sender %s, want outside-pid-namespace with uid 0", got)
	}
	if log := r.stderr.String(); !strings.Contains(log, "signal_sender=outside-pid-namespace") {
		t.Errorf("the exit line does not name the sender:\n%s", log)
	}
	if msg, _ := os.ReadFile(r.path("termlog")); !strings.Contains(string(msg), " sender=outside-pid-namespace ") {
		t.Errorf("termination message %q does not name the sender", msg)
	}
}

// TestSenderInsideThePIDNamespace: the child, a bash script, sends TERM to
// PID 1 once lfinit says it is ready, and is named by pid and command.
func TestSenderInsideThePIDNamespace(t *testing.T) {
	t.Parallel()
	r := startPID1(t, "--status-file", "DIR/status.json", "--", "/bin/bash", "-c",
		`until grep -q '"ready": true' DIR/status.json 2>/dev/null; do sleep 0.01; done; kill -TERM 1; sleep 10; :`)
	if got := r.wait(30 * time.Second); got != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit %d, want bash's 143\n%s", got, r.stderr.String())
	}
	s := readStatus(t, r.path("status.json"))
	if s.ChildPid == nil {
		t.Fatal("no child pid in the status file")
	}
	want := "process pid=" + strconv.Itoa(*s.ChildPid) + " uid=0 command=bash"
	if got := senderOf(s); got != want {
		t.Errorf("sender %s, want %s", got, want)
	}
}

// TestSenderAsSubreaper: lfinit shares the test's PID namespace; the
// test's own pid and command are the sender's.
func TestSenderAsSubreaper(t *testing.T) {
	t.Parallel()
	r := startSubreaper(t, "--status-file", "DIR/status.json", "HELPER", "-ready-file", "DIR/ready")
	r.waitFile("ready")
	r.signal(syscall.SIGINT)
	if got := r.wait(10 * time.Second); got != 128+int(syscall.SIGINT) {
		t.Fatalf("exit %d, want the helper's 130\n%s", got, r.stderr.String())
	}
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	s := readStatus(t, r.path("status.json"))
	want := "process pid=" + strconv.Itoa(os.Getpid()) + " uid=" + strconv.Itoa(os.Getuid()) + " command=" + strings.TrimSpace(string(comm))
	if got := senderOf(s); got != want {
		t.Errorf("sender %s, want %s", got, want)
	}
}

// senderOf is the status file's sender keys in one line.
func senderOf(s statusfile.Status) string {
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	pid, uid := "<nil>", "<nil>"
	if s.SignalSenderPid != nil {
		pid = strconv.Itoa(*s.SignalSenderPid)
	}
	if s.SignalSenderUid != nil {
		uid = strconv.FormatUint(uint64(*s.SignalSenderUid), 10)
	}
	return str(s.SignalSender) + " pid=" + pid + " uid=" + uid + " command=" + str(s.SignalSenderCommand)
}

package notify

import (
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// send writes one datagram to addr, with rights when fds are given.
func send(t *testing.T, addr, msg string, fds ...int) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(fd, []byte(msg), oob, &unix.SockaddrUnix{Name: addr}, 0); err != nil {
		t.Fatal(err)
	}
}

func serve(t *testing.T, where string) (*Listener, chan Datagram) {
	t.Helper()
	l, err := Listen(where)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	out := make(chan Datagram, 4)
	go l.Serve(out, func(pid int) bool { return pid == os.Getpid() })
	return l, out
}

func receive(t *testing.T, out chan Datagram) Datagram {
	t.Helper()
	select {
	case d := <-out:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no message received")
	}
	return Datagram{}
}

func TestListenAbstractCredentials(t *testing.T) {
	l, out := serve(t, Abstract)
	if !strings.HasPrefix(l.Addr(), "@lfinit-notify-") {
		t.Fatalf("address %q", l.Addr())
	}
	send(t, l.Addr(), "READY=1\nSTATUS=up")
	d := receive(t, out)
	if d.Pid != os.Getpid() || d.Uid != os.Getuid() || !d.InTree || !d.Msg.Has(KindReady) || d.Msg.Status != "up" {
		t.Fatalf("got %+v", d)
	}
}

// TestBarrierDescriptorClosed is systemd-notify's barrier: the sender
// waits until the write end's last copy, lfinit's, is closed.
func TestBarrierDescriptorClosed(t *testing.T) {
	l, out := serve(t, Abstract)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	send(t, l.Addr(), "BARRIER=1", p[1])
	unix.Close(p[1])
	if d := receive(t, out); !d.Msg.Has(KindBarrier) {
		t.Fatalf("got %+v", d.Msg.Lines)
	}
	fds := []unix.PollFd{{Fd: int32(p[0]), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 10000); err != nil || n != 1 || fds[0].Revents&unix.POLLHUP == 0 {
		t.Fatalf("the barrier's pipe is still open: n=%d revents=%#x err=%v", n, fds[0].Revents, err)
	}
}

func TestListenDirectory(t *testing.T) {
	dir := t.TempDir()
	l, out := serve(t, dir)
	st, err := os.Stat(l.Addr())
	if err != nil || st.Mode().Perm() != 0o666 {
		t.Fatalf("socket %s: %v %v", l.Addr(), st, err)
	}
	send(t, l.Addr(), "STOPPING=1")
	if d := receive(t, out); !d.Msg.Has(KindStopping) {
		t.Fatalf("got %+v", d.Msg.Lines)
	}
	l.Close()
	if _, err := os.Stat(l.Addr()); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
}

// TestFloodDropsNeverBlocks sends more than the channel holds while
// nobody reads it: the excess is counted, and the listener still reads.
func TestFloodDropsNeverBlocks(t *testing.T) {
	l, err := Listen(Abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	out := make(chan Datagram, 1)
	go l.Serve(out, func(int) bool { return true })
	for i := 0; i < 50; i++ {
		send(t, l.Addr(), "WATCHDOG=1")
	}
	deadline := time.Now().Add(10 * time.Second)
	for l.Dropped() < 49 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if l.Dropped() != 49 || len(out) != 1 {
		t.Fatalf("dropped %d, queued %d", l.Dropped(), len(out))
	}
}

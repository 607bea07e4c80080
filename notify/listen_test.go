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

// serve listens at where; only the test itself is of the tree.
func serve(t *testing.T, where string) (*Listener, chan Datagram) {
	return serveWith(t, where, 4, func(pid int) bool { return pid == os.Getpid() })
}

// serveWith listens at where, handing messages to a channel with room
// places; inTree is the sender check.
func serveWith(t *testing.T, where string, room int, inTree func(int) bool) (*Listener, chan Datagram) {
	t.Helper()
	l, err := Listen(where)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	out := make(chan Datagram, room)
	go l.Serve(out, inTree)
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
	l, _ := serve(t, Abstract)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	send(t, l.Addr(), "BARRIER=1", p[1])
	unix.Close(p[1])
	fds := []unix.PollFd{{Fd: int32(p[0]), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 10000); err != nil || n != 1 || fds[0].Revents&unix.POLLHUP == 0 {
		t.Fatalf("the barrier's pipe is still open: n=%d revents=%#x err=%v", n, fds[0].Revents, err)
	}
}

// TestStrangersAndGarbageNeverReachTheLoop: counted by the listener only.
func TestStrangersAndGarbageNeverReachTheLoop(t *testing.T) {
	l, out := serveWith(t, Abstract, 4, func(int) bool { return false })
	send(t, l.Addr(), "READY=1")
	l2, out2 := serve(t, Abstract)
	send(t, l2.Addr(), "junk\nFDSTORE=1")
	send(t, l2.Addr(), "STATUS=counted")
	if d := receive(t, out2); d.Msg.Status != "counted" {
		t.Fatalf("got %+v", d)
	}
	if c := l2.Counts(); c[KindGarbage] != 1 || c[KindIgnored] != 1 || len(out2) != 0 {
		t.Fatalf("counts %v, queued %d", c, len(out2))
	}
	deadline := time.Now().Add(10 * time.Second)
	for l.Counts()[countOutside] < 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if len(out) != 0 {
		t.Fatal("a stranger's message reached the loop")
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
	l, out := serveWith(t, Abstract, 1, func(int) bool { return true })
	for i := 0; i < 50; i++ {
		send(t, l.Addr(), "WATCHDOG=1")
	}
	deadline := time.Now().Add(10 * time.Second)
	for l.Counts()[countDropped] < 49 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if c := l.Counts(); c[countDropped] != 49 || c[KindWatchdog] != 50 || len(out) != 1 {
		t.Fatalf("counts %v, queued %d", c, len(out))
	}
}

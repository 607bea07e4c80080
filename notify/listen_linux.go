package notify

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Abstract is the --ready-notify value for a socket in the abstract
// namespace: no file, so it works FROM scratch, on a read-only root and
// for a child running as another user.
const Abstract = "abstract"

// SocketName is the socket's file name in a directory given instead.
const SocketName = "notify.sock"

// maxFDs is how many descriptors one message may carry and still have
// them all closed here; the kernel closes those beyond the room it had.
const maxFDs = 16

// Datagram is one message and who sent it.
type Datagram struct {
	Pid, Uid int  // from SCM_CREDENTIALS; Pid 0 when the sender is not in lfinit's PID namespace
	InTree   bool // the sender is a process of lfinit's tree (the accept function said so)
	Msg      Message
}

// Listener is the socket lfinit serves the protocol on.
type Listener struct {
	conn   *net.UnixConn
	addr   string // NOTIFY_SOCKET as the child gets it
	path   string // the file to remove at Close; "" for an abstract socket
	counts [numCounts]atomic.Uint64
}

// The counts beyond the kinds of line: messages from outside the tree,
// and messages the loop had no room for.
const (
	countOutside = int(NumKinds) + iota
	countDropped
	numCounts
)

// CountNames are the names of Counts' entries: the kinds, then outside
// and dropped.
func CountNames() []string {
	names := make([]string, 0, numCounts)
	for _, k := range Kinds() {
		names = append(names, k.String())
	}
	return append(names, "outside", "dropped")
}

// Listen opens the socket: in the abstract namespace for Abstract,
// otherwise as SocketName in the directory where, writable by every user
// (the sender's pid, not the file's mode, decides who is heard).
func Listen(where string) (*Listener, error) {
	l := &Listener{}
	if where == Abstract {
		l.addr = "@lfinit-notify-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(rand.Uint64()>>16, 36)
	} else {
		l.path = filepath.Join(where, SocketName)
		l.addr = l.path
		if err := os.Remove(l.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: l.addr, Net: "unixgram"})
	if err != nil {
		return nil, err
	}
	l.conn = conn
	if err := l.setup(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// setup asks for the senders' credentials and opens the file to all users.
func (l *Listener) setup() error {
	raw, err := l.conn.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PASSCRED, 1)
	}); err != nil {
		return err
	}
	if serr != nil || l.path == "" {
		return serr
	}
	return os.Chmod(l.path, 0o666)
}

// Addr is the value of NOTIFY_SOCKET for the child.
func (l *Listener) Addr() string { return l.addr }

// Counts are how many lines of each kind came from lfinit's tree, how
// many messages came from outside it, and how many the loop had no room
// for, in CountNames' order. Counted here, so that neither garbage nor a
// stranger's flood ever wakes the loop.
func (l *Listener) Counts() []uint64 {
	out := make([]uint64, numCounts)
	for i := range out {
		out[i] = l.counts[i].Load()
	}
	return out
}

// Close closes the socket (ending Serve) and removes its file.
func (l *Listener) Close() error {
	err := l.conn.Close()
	if l.path != "" {
		os.Remove(l.path)
	}
	return err
}

// Serve reads messages until Close, counts them, and hands those of
// lfinit's tree that say something the loop acts on to out, without ever
// waiting for it: when out is full the message is dropped and counted, so
// a flood never grows a buffer nor holds up the loop that forwards
// signals. inTree says whether a sender's pid is of lfinit's tree. Every
// descriptor a message carries is closed once its sender was checked:
// systemd-notify's BARRIER=1 waits until the receiver closes its pipe.
func (l *Listener) Serve(out chan<- Datagram, inTree func(pid int) bool) {
	buf := make([]byte, MaxDatagram+1)
	oob := make([]byte, unix.CmsgSpace(unix.SizeofUcred)+unix.CmsgSpace(4*maxFDs))
	var fds []int
	for {
		n, oobn, flags, _, err := l.conn.ReadMsgUnix(buf, oob)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A message lost in the kernel; the next one stands alone.
			// The pause keeps an error that repeats from spinning a CPU.
			time.Sleep(time.Millisecond)
			continue
		}
		d := Datagram{Msg: Parse(buf[:n], flags&unix.MSG_TRUNC != 0)}
		d.Pid, d.Uid, fds = credentials(oob[:oobn], fds[:0])
		d.InTree = d.Pid > 0 && inTree(d.Pid)
		for _, fd := range fds {
			unix.Close(fd)
		}
		if l.count(&d) {
			select {
			case out <- d:
			default:
				l.counts[countDropped].Add(1)
			}
		}
	}
}

// count counts d and reports whether the loop has anything to do with it.
func (l *Listener) count(d *Datagram) bool {
	if !d.InTree {
		l.counts[countOutside].Add(1)
		return false
	}
	acts := false
	for k, n := range d.Msg.Lines {
		if n > 0 {
			l.counts[k].Add(uint64(n))
			acts = acts || Kind(k) < KindBarrier
		}
	}
	return acts
}

// credentials returns the sender's pid and uid from a message's control
// data (0, 0 when none came), and appends to fds every descriptor it
// carried, for the caller to close.
func credentials(oob []byte, fds []int) (pid, uid int, _ []int) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0, 0, fds
	}
	for i := range msgs {
		if rights, err := unix.ParseUnixRights(&msgs[i]); err == nil {
			fds = append(fds, rights...)
		} else if c, err := unix.ParseUnixCredentials(&msgs[i]); err == nil {
			pid, uid = int(c.Pid), int(c.Uid)
		}
	}
	return pid, uid, fds
}

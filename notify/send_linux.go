package notify

import (
	"golang.org/x/sys/unix"
)

// Sender sends lfinit's own notify messages to the socket its parent
// named (podman --sdnotify=container, a systemd unit running the
// container), so the host sees the service's real readiness.
type Sender struct {
	fd   int
	addr unix.SockaddrUnix
}

// Dial opens a sender to addr, a NOTIFY_SOCKET value: a path, or an
// abstract name starting with @. Nothing is connected: each Send names
// the address, so a restarted receiver is found again.
func Dial(addr string) (*Sender, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &Sender{fd: fd, addr: unix.SockaddrUnix{Name: addr}}, nil
}

// Send sends msg without ever waiting: a receiver whose queue is full, or
// that is gone, loses the message rather than delay lfinit.
func (s *Sender) Send(msg string) error {
	return unix.Sendto(s.fd, []byte(msg), unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL, &s.addr)
}

// Close closes the sender's socket.
func (s *Sender) Close() error { return unix.Close(s.fd) }

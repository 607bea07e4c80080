// Package asynclog is lfinit's log writer: lines are queued to a goroutine
// that writes them, so a stderr that blocks never stalls a forward or a kill.
package asynclog

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Writer hands log lines to a goroutine that writes them, so a stderr
// that blocks (a full pipe nobody reads) can never stall a forward or a
// kill. When its queue is full it drops lines and counts them.
//
// Once the run is over (Close), lines are written in line, by the caller,
// in order: no deadline is left to protect, and a handoff to the goroutine
// would only make lfinit's exit wait for another thread.
type Writer struct {
	w       io.Writer
	fd      int // w's descriptor, polled before an inline write; -1 if none
	lines   chan []byte
	done    chan struct{}
	dropped atomic.Int64
	queued  atomic.Int64 // lines handed to the goroutine
	written atomic.Int64 // lines it has written

	mu     sync.Mutex // orders a Write against Close
	closed bool
	inline bool // the queue is drained: Write writes itself
}

// New starts the goroutine that copies queued lines to w; queue is how
// many lines may wait before new ones are dropped.
func New(w io.Writer, queue int) *Writer {
	a := &Writer{w: w, fd: descriptor(w), lines: make(chan []byte, queue), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for line := range a.lines {
			w.Write(line) // a failed log write has nowhere to be reported
			a.written.Add(1)
		}
	}()
	return a
}

// Write queues a copy of p (slog reuses its buffer) and never blocks; after
// Close it writes p itself if the descriptor can take it at once.
func (a *Writer) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.inline && writable(a.fd):
		a.w.Write(p)
	case a.closed:
		a.dropped.Add(1) // the queue never drained, or the pipe is full
	default:
		select {
		case a.lines <- append([]byte(nil), p...):
			a.queued.Add(1)
		default:
			a.dropped.Add(1)
		}
	}
	return len(p), nil
}

// Dropped is how many lines were lost to a full queue.
func (a *Writer) Dropped() int64 { return a.dropped.Load() }

// Close stops queueing; once the queued lines are written (it waits up to
// timeout for them) later lines are written in line. Calling it again does
// nothing.
func (a *Writer) Close(timeout time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	a.closed = true
	// Everything queued is written: the goroutine waits on an empty queue
	// and can be left there, with no handoff to wait for.
	if a.written.Load() == a.queued.Load() {
		a.inline = true
		return
	}
	close(a.lines)
	select {
	case <-a.done:
		a.inline = true
	case <-time.After(timeout):
	}
}

// descriptor is w's file descriptor when it is a file, or -1.
func descriptor(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return -1
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	rc.Control(func(d uintptr) { fd = int(d) }) // Fd() would make the file blocking
	return fd
}

// writable reports whether a line written to fd now cannot block: always
// for a writer that is not a file, else when poll says so (a full pipe
// nobody reads must not keep lfinit from exiting).
func writable(fd int) bool {
	if fd < 0 {
		return true
	}
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	for {
		n, err := unix.Poll(pfd, 0)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n == 1 && pfd[0].Revents&unix.POLLOUT != 0
	}
}

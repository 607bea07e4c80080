package main

import (
	"io"
	"sync/atomic"
	"time"
)

// asyncWriter hands log lines to a goroutine that writes them, so a stderr
// that blocks (a full pipe nobody reads) can never stall a forward or a
// kill. When its queue is full it drops lines and counts them.
type asyncWriter struct {
	lines   chan []byte
	done    chan struct{}
	dropped atomic.Int64
}

// newAsyncWriter starts the goroutine that copies queued lines to w.
func newAsyncWriter(w io.Writer, queue int) *asyncWriter {
	a := &asyncWriter{lines: make(chan []byte, queue), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for line := range a.lines {
			w.Write(line) // a failed log write has nowhere to be reported
		}
	}()
	return a
}

// Write queues a copy of p (slog reuses its buffer) and never blocks.
func (a *asyncWriter) Write(p []byte) (int, error) {
	select {
	case a.lines <- append([]byte(nil), p...):
	default:
		a.dropped.Add(1)
	}
	return len(p), nil
}

// Dropped is how many lines were lost to a full queue.
func (a *asyncWriter) Dropped() int64 { return a.dropped.Load() }

// Close stops taking lines and waits up to timeout for the queue to drain.
func (a *asyncWriter) Close(timeout time.Duration) {
	close(a.lines)
	select {
	case <-a.done:
	case <-time.After(timeout):
	}
}

package asynclog

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
)

// BenchmarkSignalLogLine is one "signal received" line through slog and the
// Writer (to io.Discard): the work a forward must not wait behind.
func BenchmarkSignalLogLine(b *testing.B) {
	w := New(io.Discard, 1024)
	log := slog.New(slog.NewTextHandler(w, nil)).With("logger", "lfinit")
	hard := time.Date(2026, 1, 2, 3, 4, 13, 250e6, time.UTC).Format(time.RFC3339Nano)
	b.ReportAllocs()
	for b.Loop() {
		log.Info("signal received", "signal", "SIGTERM", "action", "shutdown", "reason", "terminate",
			"hard_deadline", hard, "remaining", "8.25s")
	}
	b.StopTimer()
	w.Close(time.Second)
	b.ReportMetric(float64(w.Dropped())/float64(b.N), "dropped/op")
}

// TestWriterKeepsOrderAcrossClose: lines queued before Close and lines
// written in line after it reach the writer in the order they were written.
func TestWriterKeepsOrderAcrossClose(t *testing.T) {
	for _, queued := range []int{0, 1, 50} {
		var out measure.Buffer
		w := New(&out, 1024)
		var want strings.Builder
		for i := range queued {
			fmt.Fprintf(w, "queued %d\n", i)
			fmt.Fprintf(&want, "queued %d\n", i)
		}
		w.Close(5 * time.Second)
		for i := range 3 {
			fmt.Fprintf(w, "after %d\n", i)
			fmt.Fprintf(&want, "after %d\n", i)
		}
		if got := out.String(); got != want.String() {
			t.Errorf("%d queued: got\n%s\nwant\n%s", queued, got, want.String())
		}
		if w.Dropped() != 0 {
			t.Errorf("%d queued: %d lines dropped", queued, w.Dropped())
		}
	}
}

// TestWriterCloseIsBounded: a writer that never returns (a stderr
// nobody reads) holds Close no longer than its timeout, and the lines
// after it are dropped and counted rather than blocking.
func TestWriterCloseIsBounded(t *testing.T) {
	stuck := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
	defer close(stuck.release)
	w := New(stuck, 4)
	io.WriteString(w, "first\n")
	<-stuck.entered
	io.WriteString(w, "second\n")
	t0 := time.Now()
	w.Close(100 * time.Millisecond)
	if took := time.Since(t0); took > 3*time.Second {
		t.Fatalf("Close took %v with a stuck writer", took)
	}
	io.WriteString(w, "after\n")
	if w.Dropped() != 1 {
		t.Errorf("dropped %d, want the line after Close", w.Dropped())
	}
}

// TestWriterInlineSkipsAFullPipe: after Close, a line for a pipe that
// cannot take it now is dropped, never waited for.
func TestWriterInlineSkipsAFullPipe(t *testing.T) {
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer wr.Close()
	if err := measure.FillPipe(wr); err != nil {
		t.Fatal(err)
	}
	w := New(wr, 4)
	w.Close(time.Second)
	done := make(chan struct{})
	go func() {
		io.WriteString(w, "the final line\n")
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("an inline write waited on a full pipe")
	}
	if w.Dropped() != 1 {
		t.Errorf("dropped %d, want 1", w.Dropped())
	}
	// Once the reader drains it, the next line is written.
	r.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	io.Copy(io.Discard, r)
	io.WriteString(w, "next\n")
	if w.Dropped() != 1 {
		t.Errorf("a line to a pipe with room was dropped")
	}
}

// blockingWriter blocks every Write until release is closed.
type blockingWriter struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	return len(p), nil
}

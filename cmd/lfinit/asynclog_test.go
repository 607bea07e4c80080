package main

import (
	"io"
	"log/slog"
	"testing"
	"time"
)

// BenchmarkSignalLogLine is one "signal received" line through slog and the
// asyncWriter (to io.Discard): the work a forward must not wait behind.
func BenchmarkSignalLogLine(b *testing.B) {
	w := newAsyncWriter(io.Discard, 1024)
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

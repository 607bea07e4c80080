// Package logline is how lfinit writes a log line where time counts (between
// a deadline and its kill, between the child's exit and lfinit's), and how
// its lines carry durations.
package logline

import (
	"context"
	"log/slog"
	"time"
)

// Write writes one line at level straight to l's handler: slog.Logger would
// first look up its caller (runtime.Callers walks the stack and the pc
// tables, and after startpages.Drop faults their pages back in) for a
// source field lfinit never prints.
func Write(l *slog.Logger, level slog.Level, msg string, attrs ...any) {
	ctx := context.Background()
	h := l.Handler()
	if !h.Enabled(ctx, level) {
		return
	}
	rec := slog.NewRecord(time.Now(), level, msg, 0)
	rec.Add(attrs...)
	_ = h.Handle(ctx, rec)
}

// Seconds is d as a number of seconds, to the microsecond: logs carry
// durations as numbers (*_seconds), which JSON queries can compare. It
// divides whole microseconds once, so the number prints with six decimals
// at most (Duration.Seconds adds two rounded parts: 1.5445069999999999).
func Seconds(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)/time.Microsecond) / 1e6
}

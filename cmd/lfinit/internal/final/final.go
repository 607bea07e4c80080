// Package final writes the records of a run's end, once the supervisor has
// returned: the summary line, the status file, the metrics, the
// termination message and the push, in that order, each bounded, so that
// a hung sink delays lfinit's exit by its bound at most and never changes
// the exit code. It is the only writer of the final records.
package final

import (
	"log/slog"
	"time"

	"github.com/light-fabric/lfinit/internal/logline"
	"github.com/light-fabric/lfinit/statusfile"
	"github.com/light-fabric/lfinit/supervisor"
	"github.com/light-fabric/lfinit/termlog"
)

// The bounds of the records that have no option of their own (the push's
// is --push-timeout).
const (
	// LogBound is how long the log lines queued before the summary may
	// take to drain; after it the summary is written anyway, in line.
	LogBound = 200 * time.Millisecond
	// WriteBound is how long a file record (status file, termination
	// message) may take: a hung disk must not keep PID 1 alive.
	WriteBound = time.Second
)

// StatusFile is the status file's writer (statusfile.Publisher).
type StatusFile interface {
	Publish(statusfile.Status)
	Close(timeout time.Duration) bool // whether the last status was written
}

// Metrics is the metrics' end (metrics.Metrics).
type Metrics interface {
	Status(statusfile.Status)
	SetLive(live bool)
}

// Records are where a run's final records go; a nil field (or an empty
// path) is a record lfinit was not asked for.
type Records struct {
	Log *slog.Logger
	// FlushLog stops queueing log lines and waits, up to its argument,
	// for the queued ones: later lines are written in line, in order.
	FlushLog       func(timeout time.Duration)
	StatusFile     StatusFile
	StatusPath     string // for the warning when the status file is not written
	Metrics        Metrics
	TerminationLog string
	Push           func() // bounded by its own timeout; logs its own failure
	// Rehearsal is Log's twin that writes nowhere, for Rehearse.
	Rehearsal *slog.Logger
}

// Write writes the final records of res, in order.
func (rec Records) Write(res supervisor.Result) {
	if rec.FlushLog != nil {
		rec.FlushLog(LogBound)
	}
	end := time.Now()
	logline.Write(rec.Log, Level(res), "exit", Summary(res, end)...)
	rec.statusFile(res.Status)
	if rec.Metrics != nil {
		rec.Metrics.Status(res.Status)
		rec.Metrics.SetLive(false)
	}
	rec.terminationMessage(res.Status, end.Sub(res.Start))
	if rec.Push != nil {
		rec.Push()
	}
}

// Rehearse formats res's summary line and termination message into
// nowhere, at idle: a stop then finds their code and data mapped (a fault
// costs microseconds) instead of faulting them in between the child's exit
// and lfinit's. It writes nothing and changes nothing.
func (rec Records) Rehearse(res supervisor.Result) {
	if rec.Rehearsal != nil {
		logline.Write(rec.Rehearsal, Level(res), "exit", Summary(res, time.Now())...)
	}
	if rec.TerminationLog != "" {
		_ = termlog.Message(res.Status, time.Since(res.Start))
	}
}

func (rec Records) statusFile(s statusfile.Status) {
	if rec.StatusFile == nil {
		return
	}
	rec.StatusFile.Publish(s)
	if !rec.StatusFile.Close(WriteBound) {
		rec.Log.Warn("the final status was not written (the write failed or hung for a second)", "path", rec.StatusPath)
	}
}

func (rec Records) terminationMessage(s statusfile.Status, total time.Duration) {
	if rec.TerminationLog == "" {
		return
	}
	msg := termlog.Message(s, total)
	if err := withTimeout(WriteBound, func() error { return termlog.Write(rec.TerminationLog, msg) }); err != nil {
		rec.Log.Warn("cannot write the termination message", "path", rec.TerminationLog, "err", err)
	}
}

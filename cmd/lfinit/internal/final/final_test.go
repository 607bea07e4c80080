package final

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/statusfile"
	"github.com/light-fabric/lfinit/supervisor"
)

// trail is the order in which the fakes were written to.
type trail struct{ steps []string }

func (t *trail) add(s string) { t.steps = append(t.steps, s) }

type fakeStatusFile struct {
	t       *trail
	written bool // what Close reports
	got     statusfile.Status
}

func (f *fakeStatusFile) Publish(s statusfile.Status) { f.got = s; f.t.add("status file") }
func (f *fakeStatusFile) Close(time.Duration) bool    { return f.written }

type fakeMetrics struct {
	t    *trail
	live bool
}

func (f *fakeMetrics) Status(statusfile.Status) { f.t.add("metrics") }
func (f *fakeMetrics) SetLive(live bool)        { f.live = live }

func graceful(t *testing.T) supervisor.Result {
	t.Helper()
	o, code, reason, sig, child := statusfile.Graceful, 143, "terminate", "SIGTERM", 42
	from, fromPid, fromUid, fromCommand := "process", 7, uint32(0), "bash"
	start := time.Now().Add(-time.Second)
	return supervisor.Result{
		Code:  143,
		Start: start, SignalAt: start.Add(500 * time.Millisecond),
		Status: statusfile.Status{
			Version: statusfile.Version, Phase: statusfile.Stopped, Outcome: &o, ExitCode: &code,
			Reason: &reason, Signal: &sig, Pid: 1, ChildPid: &child, Reaped: 1,
			SignalSender: &from, SignalSenderPid: &fromPid, SignalSenderUid: &fromUid, SignalSenderCommand: &fromCommand,
		},
	}
}

// TestWriteOrder: the final records leave in the order the contract
// states (summary line, status file, metrics, termination message, push),
// the log flushed before the summary, /livez down with the metrics.
func TestWriteOrder(t *testing.T) {
	tr := &trail{}
	var log bytes.Buffer
	termLog := filepath.Join(t.TempDir(), "termination-log")
	sf, m := &fakeStatusFile{t: tr, written: true}, &fakeMetrics{t: tr, live: true}
	rec := Records{
		Log: slog.New(slog.NewTextHandler(&log, nil)),
		FlushLog: func(d time.Duration) {
			if d != LogBound {
				t.Errorf("log flushed within %v, want %v", d, LogBound)
			}
			tr.add("flush log")
		},
		StatusFile: sf, Metrics: m, TerminationLog: termLog,
		Push: func() {
			if _, err := os.Stat(termLog); err != nil {
				t.Errorf("push before the termination message: %v", err)
			}
			tr.add("push")
		},
	}
	// The summary line is seen through the status file's step: the log
	// must hold it by then.
	sfPublish := func() {
		if !strings.Contains(log.String(), "msg=exit") {
			t.Error("status file written before the summary line")
		}
	}
	rec.StatusFile = publishHook{sf, sfPublish}
	rec.Write(graceful(t))
	want := []string{"flush log", "status file", "metrics", "push"}
	if !slices.Equal(tr.steps, want) {
		t.Errorf("steps %q, want %q", tr.steps, want)
	}
	if m.live {
		t.Error("/livez still up after the final records")
	}
	if sf.got.Phase != statusfile.Stopped {
		t.Errorf("status file got phase %s, want stopped", sf.got.Phase)
	}
	msg, err := os.ReadFile(termLog)
	if err != nil || !strings.Contains(string(msg), "outcome=graceful exit_code=143") || !strings.Contains(string(msg), "sender=bash[7]") {
		t.Errorf("termination message %q (%v)", msg, err)
	}
	line := log.String()
	for _, f := range []string{"level=INFO", "msg=exit", "outcome=graceful", "exit_code=143", "reason=terminate", "signal=SIGTERM",
		"signal_sender=process signal_sender_pid=7 signal_sender_command=bash signal_sender_uid=0", "shutdown_duration_seconds=", "child_pid=42"} {
		if !strings.Contains(line, f) {
			t.Errorf("summary %q lacks %s", line, f)
		}
	}
}

// publishHook calls hook before handing the status on.
type publishHook struct {
	StatusFile
	hook func()
}

func (p publishHook) Publish(s statusfile.Status) { p.hook(); p.StatusFile.Publish(s) }

// TestUnwrittenStatusFileIsWarned: a status file whose last write failed
// or hung is said in the log, and the records after it are still written.
func TestUnwrittenStatusFileIsWarned(t *testing.T) {
	tr := &trail{}
	var log bytes.Buffer
	rec := Records{
		Log:        slog.New(slog.NewTextHandler(&log, nil)),
		StatusFile: &fakeStatusFile{t: tr}, StatusPath: "/run/status.json",
		Push: func() { tr.add("push") },
	}
	rec.Write(graceful(t))
	if !strings.Contains(log.String(), "the final status was not written") || !strings.Contains(log.String(), "path=/run/status.json") {
		t.Errorf("no warning of the unwritten status file:\n%s", log.String())
	}
	if !slices.Equal(tr.steps, []string{"status file", "push"}) {
		t.Errorf("steps %q", tr.steps)
	}
}

// TestNothingAskedWritesOnlyTheSummary: without a status file, metrics,
// termination log or push, the summary line is the only record.
func TestNothingAskedWritesOnlyTheSummary(t *testing.T) {
	var log bytes.Buffer
	Records{Log: slog.New(slog.NewTextHandler(&log, nil))}.Write(graceful(t))
	if n := strings.Count(log.String(), "\n"); n != 1 || !strings.Contains(log.String(), "msg=exit") {
		t.Errorf("log %q, want the summary line alone", log.String())
	}
}

// TestLevel: the summary's level says how the run ended.
func TestLevel(t *testing.T) {
	outcome := func(o statusfile.Outcome) *statusfile.Outcome { return &o }
	for _, tc := range []struct {
		name string
		res  supervisor.Result
		want slog.Level
	}{
		{"graceful", supervisor.Result{Status: statusfile.Status{Outcome: outcome(statusfile.Graceful)}}, slog.LevelInfo},
		{"interactive", supervisor.Result{Interactive: true, Status: statusfile.Status{Outcome: outcome(statusfile.ChildExited)}}, slog.LevelDebug},
		{"failed", supervisor.Result{Status: statusfile.Status{Outcome: outcome(statusfile.Failed)}}, slog.LevelError},
		{"deadline", supervisor.Result{Interactive: true, Status: statusfile.Status{Outcome: outcome(statusfile.DeadlineExceeded)}}, slog.LevelWarn},
		{"killed", supervisor.Result{Status: statusfile.Status{Outcome: outcome(statusfile.Graceful), Killed: 1}}, slog.LevelWarn},
		{"not signalled", supervisor.Result{Status: statusfile.Status{Outcome: outcome(statusfile.ChildExited), NotSignalled: 1}}, slog.LevelWarn},
	} {
		if got := Level(tc.res); got != tc.want {
			t.Errorf("%s: level %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSummaryWithoutShutdown: a run no signal stopped has no shutdown
// duration, and the not_signalled count only when there were some.
func TestSummaryWithoutShutdown(t *testing.T) {
	res := graceful(t)
	res.SignalAt = time.Time{}
	attrs := Summary(res, time.Now())
	for i := 0; i < len(attrs); i += 2 {
		if k := attrs[i]; k == "shutdown_duration_seconds" || k == "not_signalled" {
			t.Errorf("summary has %s: %v", k, attrs)
		}
	}
}

// TestRehearseWritesNothing: a rehearsal formats the summary line as Write
// would, into the rehearsal logger only, and writes no record: no log
// line, no status file, no metrics, no termination message, no push.
func TestRehearseWritesNothing(t *testing.T) {
	tr := &trail{}
	var log, rehearsal bytes.Buffer
	termLog := filepath.Join(t.TempDir(), "termination-log")
	rec := Records{
		Log:        slog.New(slog.NewTextHandler(&log, nil)),
		Rehearsal:  slog.New(slog.NewTextHandler(&rehearsal, nil)),
		FlushLog:   func(time.Duration) { tr.add("flush log") },
		StatusFile: &fakeStatusFile{t: tr, written: true}, Metrics: &fakeMetrics{t: tr, live: true},
		TerminationLog: termLog,
		Push:           func() { tr.add("push") },
	}
	rec.Rehearse(graceful(t))
	if len(tr.steps) != 0 || log.Len() != 0 {
		t.Errorf("a rehearsal wrote %q and logged %q", tr.steps, log.String())
	}
	if _, err := os.Stat(termLog); !os.IsNotExist(err) {
		t.Errorf("a rehearsal wrote the termination message (stat: %v)", err)
	}
	for _, f := range []string{"level=INFO", "msg=exit", "outcome=graceful", "exit_code=143", "signal=SIGTERM", "child_pid=42"} {
		if !strings.Contains(rehearsal.String(), f) {
			t.Errorf("rehearsed summary %q lacks %s", rehearsal.String(), f)
		}
	}
	rec.Rehearsal = nil
	rec.Rehearse(graceful(t)) // no rehearsal logger: nothing to format into
	if len(tr.steps) != 0 || log.Len() != 0 {
		t.Errorf("a rehearsal without its logger wrote %q and logged %q", tr.steps, log.String())
	}
}

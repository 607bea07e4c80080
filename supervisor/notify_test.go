package supervisor

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/budget"
	"github.com/light-fabric/lfinit/core"
	"github.com/light-fabric/lfinit/notify"
	"github.com/light-fabric/lfinit/readiness"
	"github.com/light-fabric/lfinit/statusfile"
)

// readyRecorder keeps what the probes were last told.
type readyRecorder struct{ ready, live bool }

func (f *readyRecorder) SetReady(ready bool)    { f.ready = ready }
func (f *readyRecorder) SetLive(live bool)      { f.live = live }
func (f *readyRecorder) SignalReceived(string)  {}
func (f *readyRecorder) SignalForwarded(string) {}
func (f *readyRecorder) Reaped(int)             {}

// notifyRunner is a runner whose child was started with --ready-notify
// (and the check, when check is set), its messages fed by hand. Its child
// is pid 0, to which nothing is ever sent (forward.Deliver refuses it).
func notifyRunner(t *testing.T, check bool) (*runner, *readyRecorder) {
	t.Helper()
	rec := &readyRecorder{live: true}
	r := &runner{m: core.NewMachine(core.Options{Budget: budget.Default()})}
	r.Log = slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	r.Recorder, r.status.recorder = rec, rec
	if check {
		r.Readiness = &readiness.Check{TCP: "127.0.0.1:8080"}
	}
	r.service.word = core.NewService(true)
	r.service.messages = make(chan notify.Datagram)
	r.apply(r.m.Started(time.Now(), false))
	return r, rec
}

// say is a message of the tree with these lines.
func say(text string) notify.Datagram {
	return notify.Datagram{Pid: 7, InTree: true, Msg: notify.Parse([]byte(text), false)}
}

func TestNotifyReadyGatesWithTheCheck(t *testing.T) {
	r, rec := notifyRunner(t, true)
	if r.apply(r.heard(say("READY=1"))); r.m.Phase() != statusfile.Starting {
		t.Fatalf("READY=1 before the check passed: %s", r.m.Phase())
	}
	r.service.probeReady = true
	if !r.gatesOpen() {
		t.Fatal("both gates passed, still closed")
	}
	r.apply(r.m.MarkReady(time.Now()))
	if r.m.Phase() != statusfile.Ready || !rec.ready {
		t.Fatalf("phase %s, /readyz %v", r.m.Phase(), rec.ready)
	}
}

func TestNotifyStoppingAndReloading(t *testing.T) {
	r, rec := notifyRunner(t, false)
	r.apply(r.heard(say("READY=1\nSTATUS=up")))
	if r.m.Phase() != statusfile.Ready || !rec.ready || r.snapshot().ServiceStatus == nil {
		t.Fatalf("after READY=1: phase %s, /readyz %v", r.m.Phase(), rec.ready)
	}
	r.apply(r.heard(say("RELOADING=1")))
	if s := r.snapshot(); rec.ready || s.Ready || *s.ServiceState != core.ServiceReloading || s.Phase != statusfile.Ready {
		t.Fatalf("reloading: /readyz %v, status ready %v, state %s", rec.ready, s.Ready, *s.ServiceState)
	}
	r.apply(r.heard(say("READY=1")))
	if !rec.ready || !r.snapshot().Ready {
		t.Fatal("READY=1 after the reload left lfinit unready")
	}
	r.apply(r.heard(say("EXTEND_TIMEOUT_USEC=5000000")))
	if s := r.snapshot(); s.ServiceExtendSeconds == nil || *s.ServiceExtendSeconds != 5 || s.HardDeadline != nil {
		t.Fatalf("EXTEND_TIMEOUT_USEC: published %v, hard deadline %v", s.ServiceExtendSeconds, s.HardDeadline)
	}
	r.apply(r.heard(say("STOPPING=1")))
	if s := r.snapshot(); rec.ready || s.Ready || *s.ServiceState != core.ServiceStopping {
		t.Fatalf("stopping: /readyz %v, status ready %v", rec.ready, s.Ready)
	}
}

func TestNotifyWatchdogTriggerWithStop(t *testing.T) {
	r, rec := notifyRunner(t, false)
	r.Watchdog, r.WatchdogStop = time.Hour, true
	r.service.dog = core.NewWatchdog(time.Hour, time.Now())
	r.apply(r.heard(say("READY=1")))
	r.apply(r.heard(say("WATCHDOG=trigger")))
	if rec.live || !r.m.ShuttingDown() || r.m.Reason() != "watchdog" || r.snapshot().WatchdogMissedAt == nil {
		t.Fatalf("live %v, shutting down %v, reason %q", rec.live, r.m.ShuttingDown(), r.m.Reason())
	}
}

package statusfile

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// schemaKeys is the status file schema, in order. Keys may be added within a
// version but never renamed or removed, so this list only ever grows.
var schemaKeys = []string{
	"version", "phase", "ready", "outcome", "exit_code", "reason", "signal",
	"pid", "child_pid", "started_at", "ready_at", "signal_at",
	"grace_deadline", "hard_deadline", "phase_since", "updated_at",
	"remaining_seconds", "killed", "reaped", "still_running", "pid_namespace", "pid_start_ticks",
	"not_signalled", "tree_method",
	"ready_error",
	"hook_outcome", "hook_exit_code", "hook_duration_seconds",
	"cause", "child_peak_rss_bytes", "child_user_seconds", "child_system_seconds",
	"tree_peak_rss_bytes", "tree_cpu_seconds", "memory_limit_bytes", "memory_peak_bytes",
	"service_state", "service_status", "service_errno", "watchdog_missed_at", "service_extend_timeout_seconds",
	"service_buserror",
	"signal_sender", "signal_sender_pid", "signal_sender_uid", "signal_sender_command",
}

// topLevelKeys returns the keys of the JSON object b, in document order.
func topLevelKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("document does not start with an object: %v %v", tok, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func pointerTo[T any](v T) *T { return &v }

// fullStatus has every field set, times with nanoseconds in a non-UTC zone.
func fullStatus() Status {
	zone := time.FixedZone("X", -5*3600)
	t0 := time.Date(2025, 3, 4, 5, 6, 7, 123456789, zone)
	o := DeadlineExceeded
	return Status{
		Version:             Version,
		Phase:               Stopped,
		Ready:               false,
		Outcome:             &o,
		ExitCode:            pointerTo(1),
		Reason:              pointerTo("terminate"),
		Signal:              pointerTo("SIGTERM"),
		Pid:                 1,
		ChildPid:            pointerTo(7),
		StartedAt:           pointerTo(t0),
		ReadyAt:             pointerTo(t0.Add(time.Second)),
		SignalAt:            pointerTo(t0.Add(2 * time.Second)),
		GraceDeadline:       pointerTo(t0.Add(10 * time.Second)),
		HardDeadline:        pointerTo(t0.Add(12 * time.Second)),
		PhaseSince:          t0.Add(12 * time.Second),
		UpdatedAt:           t0.Add(12*time.Second + 1),
		RemainingSeconds:    pointerTo(0.0),
		Killed:              2,
		Reaped:              3,
		StillRunning:        []string{"legacy-server[7]", "worker[12]"},
		Cause:               pointerTo(CauseDeadline),
		ChildPeakRSSBytes:   pointerTo(uint64(45 << 20)),
		ChildUserSeconds:    pointerTo(1.25),
		ChildSystemSeconds:  pointerTo(0.5),
		TreePeakRSSBytes:    pointerTo(uint64(45 << 20)),
		TreeCPUSeconds:      pointerTo(2.0),
		MemoryLimitBytes:    pointerTo(uint64(256 << 20)),
		MemoryPeakBytes:     pointerTo(uint64(255 << 20)),
		SignalSender:        pointerTo("process"),
		SignalSenderPid:     pointerTo(42),
		SignalSenderUid:     pointerTo(uint32(1000)),
		SignalSenderCommand: pointerTo("kill"),
	}
}

func TestSenderName(t *testing.T) {
	kind := func(k string) *string { return &k }
	for _, c := range []struct {
		s    Status
		want string
	}{
		{Status{}, ""},
		{Status{SignalSender: kind("outside-pid-namespace"), SignalSenderUid: pointerTo(uint32(0))}, "outside-pid-namespace"},
		{Status{SignalSender: kind("kernel")}, "kernel"},
		{Status{SignalSender: kind("process"), SignalSenderPid: pointerTo(7)}, "pid 7"},
		{Status{SignalSender: kind("process"), SignalSenderPid: pointerTo(7), SignalSenderCommand: kind("kill")}, "kill[7]"},
	} {
		if got := c.s.SenderName(); got != c.want {
			t.Errorf("SenderName of %+v = %q, want %q", c.s, got, c.want)
		}
	}
}

func TestSchemaKeys(t *testing.T) {
	for name, s := range map[string]Status{"full": fullStatus(), "zero": {}} {
		b, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := topLevelKeys(t, b); !reflect.DeepEqual(got, schemaKeys) {
			t.Errorf("%s: keys\n got %q\nwant %q", name, got, schemaKeys)
		}
	}
}

func TestSchemaNullsBeforeKnown(t *testing.T) {
	b, err := Marshal(Status{Phase: Starting, Pid: 1})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"outcome", "exit_code", "reason", "signal", "child_pid", "started_at",
		"ready_at", "signal_at", "grace_deadline", "hard_deadline", "remaining_seconds", "still_running", "ready_error", "hook_outcome", "hook_exit_code", "hook_duration_seconds",
		"signal_sender", "signal_sender_pid", "signal_sender_uid", "signal_sender_command"} {
		if string(m[k]) != "null" {
			t.Errorf("%s = %s, want null", k, m[k])
		}
	}
	if string(m["version"]) != "1" {
		t.Errorf("version = %s, want 1 (filled in by Marshal)", m["version"])
	}
	if string(m["ready"]) != "false" || string(m["killed"]) != "0" || string(m["phase"]) != `"starting"` {
		t.Errorf("unexpected ready/killed/phase: %s %s %s", m["ready"], m["killed"], m["phase"])
	}
	if !bytes.HasSuffix(b, []byte("}\n")) {
		t.Errorf("document does not end with a newline: %q", b)
	}
}

func TestSchemaTimesRFC3339NanoUTC(t *testing.T) {
	s := fullStatus()
	b, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Time{
		"started_at": *s.StartedAt, "ready_at": *s.ReadyAt, "signal_at": *s.SignalAt,
		"grace_deadline": *s.GraceDeadline, "hard_deadline": *s.HardDeadline,
		"phase_since": s.PhaseSince, "updated_at": s.UpdatedAt,
	}
	for k, tm := range want {
		got, _ := m[k].(string)
		if exp := tm.UTC().Format(time.RFC3339Nano); got != exp {
			t.Errorf("%s = %q, want %q", k, got, exp)
		}
		if !strings.HasSuffix(got, "Z") {
			t.Errorf("%s = %q is not UTC", k, got)
		}
	}
	if got := m["started_at"]; got != "2025-03-04T10:06:07.123456789Z" {
		t.Errorf("started_at = %v, want nanoseconds kept", got)
	}
	if got := m["updated_at"]; got != "2025-03-04T10:06:19.12345679Z" {
		t.Errorf("updated_at = %v", got)
	}
}

func TestSchemaRoundTrip(t *testing.T) {
	s := fullStatus()
	b, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	// Times come back in UTC; compare the UTC form of the original.
	if !reflect.DeepEqual(back, s.utc()) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", back, s.utc())
	}
	b2, err := Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Errorf("re-marshalled document differs:\n%s\n%s", b, b2)
	}
	// Marshal must not have changed the caller's times.
	if s.StartedAt.Location() == time.UTC {
		t.Error("Marshal converted the caller's time in place")
	}
}

func TestCloneIsDeep(t *testing.T) {
	s := fullStatus()
	c := s.clone()
	*s.ExitCode = 99
	*s.Reason = "x"
	s.StillRunning[0] = "changed"
	*s.StartedAt = time.Time{}
	if *c.ExitCode != 1 || *c.Reason != "terminate" || c.StillRunning[0] != "legacy-server[7]" || c.StartedAt.IsZero() {
		t.Errorf("clone shares memory with the original: %+v", c)
	}
}

package metrics

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/light-fabric/lfinit/statusfile"
)

// observer mirrors supervisor.Recorder and Publish, which Metrics is
// plugged into. It is copied rather than imported so this package's tests
// do not depend on the supervisor compiling.
type observer interface {
	SetReady(ready bool)
	Status(s statusfile.Status)
	SignalReceived(name string)
	SignalForwarded(name string)
	Reaped(n int)
}

var _ observer = (*Metrics)(nil)

// series gathers m and returns the samples of family name, keyed by the
// value of its first label ("" when it has none); nil if it is absent.
func series(t *testing.T, m *Metrics, name string) map[string]float64 {
	t.Helper()
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		out := map[string]float64{}
		for _, mt := range mf.GetMetric() {
			key := ""
			if lp := mt.GetLabel(); len(lp) > 0 {
				key = lp[0].GetValue()
			}
			switch {
			case mt.GetGauge() != nil:
				out[key] = mt.GetGauge().GetValue()
			case mt.GetCounter() != nil:
				out[key] = mt.GetCounter().GetValue()
			default:
				t.Fatalf("%s: unexpected metric type %v", name, mf.GetType())
			}
		}
		return out
	}
	return nil
}

// value is the single unlabelled sample of name.
func value(t *testing.T, m *Metrics, name string) float64 {
	t.Helper()
	s := series(t, m, name)
	v, ok := s[""]
	if !ok || len(s) != 1 {
		t.Fatalf("%s: want one unlabelled sample, got %v", name, s)
	}
	return v
}

// checkStateSet fails unless set has exactly the series of want, with only
// on at 1 (none at 1 when on is "").
func checkStateSet[T ~string](t *testing.T, name string, set map[string]float64, want []T, on T) {
	t.Helper()
	if len(set) != len(want) {
		t.Errorf("%s: %d series %v, want %d (one per value)", name, len(set), set, len(want))
	}
	for _, w := range want {
		v, ok := set[string(w)]
		switch {
		case !ok:
			t.Errorf("%s{%q} missing", name, w)
		case w == on && v != 1:
			t.Errorf("%s{%q} = %v, want 1", name, w, v)
		case w != on && v != 0:
			t.Errorf("%s{%q} = %v, want 0", name, w, v)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestLint(t *testing.T) {
	m := New(BuildInfo{Version: "1.2.3"}, Sources{LiveChildren: func() int { return 2 }})
	// Touch everything so the lint sees every family with samples.
	m.SignalReceived("SIGTERM")
	m.SignalForwarded("SIGTERM")
	m.Reaped(1)
	t0 := time.Now()
	m.Status(statusfile.Status{
		Phase: statusfile.Stopped, Outcome: ptr(statusfile.Graceful), ExitCode: ptr(0),
		SignalAt: &t0, GraceDeadline: ptr(t0.Add(8 * time.Second)), HardDeadline: ptr(t0.Add(8250 * time.Millisecond)),
		UpdatedAt: t0.Add(time.Second),
	})
	problems, err := testutil.GatherAndLint(m.reg)
	if err != nil {
		t.Fatalf("GatherAndLint: %v", err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func TestFamilies(t *testing.T) {
	m := New(BuildInfo{Version: "1.2.3"}, Sources{LiveChildren: func() int { return 2 }})
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		got[mf.GetName()] = true
		if mf.GetHelp() == "" {
			t.Errorf("%s has no help", mf.GetName())
		}
	}
	for _, name := range []string{
		"lfinit_phase", "lfinit_shutdown_outcome", "lfinit_ready",
		"lfinit_shutdown_start_timestamp_seconds", "lfinit_grace_deadline_timestamp_seconds",
		"lfinit_hard_deadline_timestamp_seconds", "lfinit_shutdown_duration_seconds",
		"lfinit_killed_processes", "lfinit_not_signalled_processes", "lfinit_reaped_total", "lfinit_child_processes",
		"lfinit_build_info", "lfinit_start_time_seconds", "lfinit_ready_timestamp_seconds",
		"lfinit_child_cause",
		// The dedicated registry still carries the Go and process collectors.
		"go_goroutines", "process_start_time_seconds",
	} {
		if !got[name] {
			t.Errorf("family %s missing", name)
		}
	}
	// Unknown until lfinit stops, and 0 would be a lie (it is a real code).
	if got["lfinit_exit_code"] {
		t.Error("lfinit_exit_code exported before it is known")
	}
}

func TestBuildInfo(t *testing.T) {
	m := New(BuildInfo{Version: "1.2.3"}, Sources{})
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "lfinit_build_info" {
			continue
		}
		if len(mf.GetMetric()) != 1 {
			t.Fatalf("build_info: %d series", len(mf.GetMetric()))
		}
		mt := mf.GetMetric()[0]
		labels := map[string]string{}
		for _, lp := range mt.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		if labels["version"] != "1.2.3" || labels["revision"] != "unknown" || labels["goversion"] != runtime.Version() ||
			labels["goos"] != runtime.GOOS || labels["goarch"] != runtime.GOARCH {
			t.Errorf("build_info labels = %v", labels)
		}
		if v := mt.GetGauge().GetValue(); v != 1 {
			t.Errorf("build_info = %v, want 1", v)
		}
		return
	}
	t.Fatal("lfinit_build_info missing")
}

func TestBuildInfoRevision(t *testing.T) {
	m := New(BuildInfo{Version: "v1", Revision: "abc123"}, Sources{})
	want := `
# HELP lfinit_build_info Always 1; labelled with the lfinit version and revision and the Go toolchain and platform it was built for.
# TYPE lfinit_build_info gauge
lfinit_build_info{goarch="` + runtime.GOARCH + `",goos="` + runtime.GOOS + `",goversion="` + runtime.Version() + `",revision="abc123",version="v1"} 1
`
	if err := testutil.GatherAndCompare(m.reg, strings.NewReader(want), "lfinit_build_info"); err != nil {
		t.Error(err)
	}
}

func TestKnownSignalsAtZero(t *testing.T) {
	m := New(BuildInfo{}, Sources{})
	m.KnownSignals("SIGTERM", "SIGINT")
	for _, name := range []string{"lfinit_signals_received_total", "lfinit_signals_forwarded_total"} {
		if got := series(t, m, name); len(got) != 2 || got["SIGTERM"] != 0 || got["SIGINT"] != 0 {
			t.Errorf("%s before any signal = %v, want SIGTERM and SIGINT at 0", name, got)
		}
	}
	m.SignalReceived("SIGTERM")
	m.SignalReceived("SIGHUP")
	if got := series(t, m, "lfinit_signals_received_total"); got["SIGTERM"] != 1 || got["SIGINT"] != 0 || got["SIGHUP"] != 1 {
		t.Errorf("received = %v", got)
	}
}

func TestStartAndReadyTimes(t *testing.T) {
	before := float64(time.Now().Unix())
	m := New(BuildInfo{}, Sources{})
	if v := value(t, m, "lfinit_start_time_seconds"); v < before || v > before+5 {
		t.Errorf("start time before any status = %v, want about %v", v, before)
	}
	if v := value(t, m, "lfinit_ready_timestamp_seconds"); v != 0 {
		t.Errorf("ready time before ready = %v, want 0", v)
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 500_000_000, time.UTC)
	ready := start.Add(1500 * time.Millisecond)
	m.Status(statusfile.Status{Phase: statusfile.Ready, Ready: true, StartedAt: &start, ReadyAt: &ready})
	if v := value(t, m, "lfinit_start_time_seconds"); v != unixSeconds(start) {
		t.Errorf("start time = %v, want %v", v, unixSeconds(start))
	}
	if v := value(t, m, "lfinit_ready_timestamp_seconds") - value(t, m, "lfinit_start_time_seconds"); v != 1.5 {
		t.Errorf("ready - start = %v, want 1.5", v)
	}
}

func TestScrapeTimeSources(t *testing.T) {
	var dropped, failures int64
	m := New(BuildInfo{}, Sources{
		LogLinesDropped:     func() int64 { return dropped },
		StatusWriteFailures: func() int64 { return failures },
	})
	dropped, failures = 7, 2
	if v := value(t, m, "lfinit_log_lines_dropped_total"); v != 7 {
		t.Errorf("log lines dropped = %v, want 7", v)
	}
	if v := value(t, m, "lfinit_status_file_write_failures_total"); v != 2 {
		t.Errorf("status write failures = %v, want 2", v)
	}
	if s := series(t, New(BuildInfo{}, Sources{}), "lfinit_status_file_write_failures_total"); s != nil {
		t.Errorf("status write failures without a status file = %v, want absent", s)
	}
}

func TestChildProcesses(t *testing.T) {
	n := 3
	m := New(BuildInfo{Version: "v"}, Sources{LiveChildren: func() int { return n }})
	if v := value(t, m, "lfinit_child_processes"); v != 3 {
		t.Errorf("child_processes = %v, want 3", v)
	}
	// Read at scrape time, not at New.
	n = 1
	if v := value(t, m, "lfinit_child_processes"); v != 1 {
		t.Errorf("child_processes = %v, want 1", v)
	}
	if s := series(t, New(BuildInfo{Version: "v"}, Sources{}), "lfinit_child_processes"); s != nil {
		t.Errorf("child_processes without a source = %v, want absent", s)
	}
}

func TestPhaseStateSet(t *testing.T) {
	m := New(BuildInfo{Version: "v"}, Sources{})
	// Before any Status the state set already has one series at 1.
	checkStateSet(t, "lfinit_phase", series(t, m, "lfinit_phase"), statusfile.Phases, statusfile.Starting)

	for _, p := range []statusfile.Phase{
		statusfile.Ready, statusfile.Quiescing, statusfile.Draining,
		statusfile.CleaningUp, statusfile.Stopped, statusfile.AbortingStartup, statusfile.Starting,
	} {
		m.Status(statusfile.Status{Phase: p, Ready: p == statusfile.Ready})
		checkStateSet(t, "lfinit_phase", series(t, m, "lfinit_phase"), statusfile.Phases, p)
		want := 0.0
		if p == statusfile.Ready {
			want = 1
		}
		if v := value(t, m, "lfinit_ready"); v != want {
			t.Errorf("after %s: lfinit_ready = %v, want %v", p, v, want)
		}
	}

	// An unknown phase leaves the last known one at 1 rather than none.
	m.Status(statusfile.Status{Phase: statusfile.Draining})
	m.Status(statusfile.Status{Phase: "bogus"})
	checkStateSet(t, "lfinit_phase", series(t, m, "lfinit_phase"), statusfile.Phases, statusfile.Draining)
}

// TestPhaseConsistentUnderScrape checks that no scrape, however it
// interleaves with transitions, sees zero or two phases at 1.
func TestPhaseConsistentUnderScrape(t *testing.T) {
	m := New(BuildInfo{Version: "v"}, Sources{})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			m.Status(statusfile.Status{Phase: statusfile.Phases[i%len(statusfile.Phases)]})
		}
	})
	for range 200 {
		ones := 0
		for _, v := range series(t, m, "lfinit_phase") {
			if v == 1 {
				ones++
			}
		}
		if ones != 1 {
			t.Errorf("a scrape saw %d phases at 1", ones)
			break
		}
	}
	close(stop)
	wg.Wait()
}

func TestOutcome(t *testing.T) {
	for _, o := range statusfile.Outcomes {
		t.Run(string(o), func(t *testing.T) {
			m := New(BuildInfo{Version: "v"}, Sources{})
			checkStateSet(t, "lfinit_shutdown_outcome", series(t, m, "lfinit_shutdown_outcome"), statusfile.Outcomes, "")

			// An outcome before the stopped phase is not final yet.
			m.Status(statusfile.Status{Phase: statusfile.CleaningUp, Outcome: ptr(o), ExitCode: ptr(3), Killed: 2})
			checkStateSet(t, "lfinit_shutdown_outcome", series(t, m, "lfinit_shutdown_outcome"), statusfile.Outcomes, "")
			if s := series(t, m, "lfinit_exit_code"); s != nil {
				t.Errorf("exit_code before stopped = %v", s)
			}
			if v := value(t, m, "lfinit_killed_processes"); v != 0 {
				t.Errorf("killed before stopped = %v", v)
			}

			m.Status(statusfile.Status{Phase: statusfile.Stopped, Outcome: ptr(o), ExitCode: ptr(143), Killed: 2, NotSignalled: 1})
			if v := value(t, m, "lfinit_not_signalled_processes"); v != 1 {
				t.Errorf("not signalled = %v, want 1", v)
			}
			checkStateSet(t, "lfinit_shutdown_outcome", series(t, m, "lfinit_shutdown_outcome"), statusfile.Outcomes, o)
			if v := value(t, m, "lfinit_exit_code"); v != 143 {
				t.Errorf("exit_code = %v, want 143", v)
			}
			if v := value(t, m, "lfinit_killed_processes"); v != 2 {
				t.Errorf("killed = %v, want 2", v)
			}
		})
	}
}

// TestChildCause: the cause is a state set, all 0 until lfinit stops,
// then the child's cause at 1; its cost appears with it, the memory
// cgroup's figures only when read.
func TestChildCause(t *testing.T) {
	for _, c := range statusfile.Causes {
		m := New(BuildInfo{Version: "v"}, Sources{})
		checkStateSet(t, "lfinit_child_cause", series(t, m, "lfinit_child_cause"), statusfile.Causes, "")
		if s := series(t, m, "lfinit_child_cpu_seconds"); s != nil {
			t.Errorf("cpu before the child ended = %v", s)
		}
		m.Status(statusfile.Status{Phase: statusfile.Stopped, Outcome: ptr(statusfile.ChildExited), ExitCode: ptr(137), Cause: ptr(c),
			ChildPeakRSSBytes: ptr(uint64(1 << 20)), ChildUserSeconds: ptr(0.5), ChildSystemSeconds: ptr(0.25), MemoryLimitBytes: ptr(uint64(64 << 20))})
		checkStateSet(t, "lfinit_child_cause", series(t, m, "lfinit_child_cause"), statusfile.Causes, c)
		if s := series(t, m, "lfinit_child_cpu_seconds"); s["user"] != 0.5 || s["system"] != 0.25 {
			t.Errorf("cpu = %v", s)
		}
		if v := value(t, m, "lfinit_child_peak_rss_bytes"); v != 1<<20 {
			t.Errorf("peak rss = %v", v)
		}
		if v := value(t, m, "lfinit_memory_limit_bytes"); v != 64<<20 {
			t.Errorf("memory limit = %v", v)
		}
		if s := series(t, m, "lfinit_memory_peak_bytes"); s != nil {
			t.Errorf("memory peak not read, yet exported: %v", s)
		}
	}
}

func TestExitCodeZero(t *testing.T) {
	m := New(BuildInfo{Version: "v"}, Sources{})
	m.Status(statusfile.Status{Phase: statusfile.Stopped, Outcome: ptr(statusfile.ChildExited), ExitCode: ptr(0)})
	if v := value(t, m, "lfinit_exit_code"); v != 0 {
		t.Errorf("exit_code = %v, want 0", v)
	}
	// No shutdown was asked: there is no shutdown duration to report.
	if v := value(t, m, "lfinit_shutdown_duration_seconds"); v != 0 {
		t.Errorf("shutdown_duration = %v, want 0", v)
	}
}

func TestDeadlines(t *testing.T) {
	m := New(BuildInfo{Version: "v"}, Sources{})
	for _, name := range []string{
		"lfinit_shutdown_start_timestamp_seconds", "lfinit_grace_deadline_timestamp_seconds",
		"lfinit_hard_deadline_timestamp_seconds", "lfinit_shutdown_duration_seconds",
	} {
		if v := value(t, m, name); v != 0 {
			t.Errorf("%s = %v before a shutdown, want 0", name, v)
		}
	}

	t0 := time.Date(2030, 1, 2, 3, 4, 5, 250_000_000, time.UTC)
	grace := t0.Add(8 * time.Second)
	hard := t0.Add(8250 * time.Millisecond)
	m.Status(statusfile.Status{Phase: statusfile.Quiescing, SignalAt: &t0, GraceDeadline: &grace, HardDeadline: &hard, UpdatedAt: t0})
	want := map[string]float64{
		"lfinit_shutdown_start_timestamp_seconds": 1893553445.25,
		"lfinit_grace_deadline_timestamp_seconds": 1893553453.25,
		"lfinit_hard_deadline_timestamp_seconds":  1893553453.5,
	}
	for name, w := range want {
		if v := value(t, m, name); v != w {
			t.Errorf("%s = %v, want %v", name, v, w)
		}
	}

	// A second signal shortens the hard deadline; a snapshot without the
	// pointers erases nothing.
	hard2 := t0.Add(2 * time.Second)
	m.Status(statusfile.Status{Phase: statusfile.Draining, HardDeadline: &hard2})
	if v := value(t, m, "lfinit_hard_deadline_timestamp_seconds"); v != 1893553447.25 {
		t.Errorf("hard deadline after hurry = %v", v)
	}
	if v := value(t, m, "lfinit_shutdown_start_timestamp_seconds"); v != want["lfinit_shutdown_start_timestamp_seconds"] {
		t.Errorf("shutdown start erased: %v", v)
	}

	m.Status(statusfile.Status{
		Phase: statusfile.Stopped, Outcome: ptr(statusfile.Graceful), ExitCode: ptr(0),
		SignalAt: &t0, UpdatedAt: t0.Add(1500 * time.Millisecond),
	})
	if v := value(t, m, "lfinit_shutdown_duration_seconds"); v != 1.5 {
		t.Errorf("shutdown_duration = %v, want 1.5", v)
	}
}

func TestCounters(t *testing.T) {
	m := New(BuildInfo{Version: "v"}, Sources{})
	m.SignalReceived("SIGTERM")
	m.SignalReceived("SIGTERM")
	m.SignalReceived("SIGINT")
	m.SignalForwarded("SIGQUIT")
	m.Reaped(3)
	m.Reaped(0)
	m.Reaped(-1) // would panic a raw Counter.Add
	m.Reaped(1)
	m.SignalForwarded("\xff") // invalid UTF-8: dropped, not a panic

	if got := series(t, m, "lfinit_signals_received_total"); len(got) != 2 || got["SIGTERM"] != 2 || got["SIGINT"] != 1 {
		t.Errorf("signals_received = %v", got)
	}
	if got := series(t, m, "lfinit_signals_forwarded_total"); len(got) != 1 || got["SIGQUIT"] != 1 {
		t.Errorf("signals_forwarded = %v", got)
	}
	if v := value(t, m, "lfinit_reaped_total"); v != 4 {
		t.Errorf("reaped = %v, want 4", v)
	}
}

func TestCountersConcurrent(t *testing.T) {
	m := New(BuildInfo{Version: "v"}, Sources{})
	names := []string{"SIGTERM", "SIGINT", "SIGHUP", "SIGUSR1"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				m.SignalForwarded(names[(g+i)%len(names)])
			}
		})
	}
	wg.Wait()
	total := 0.0
	for _, v := range series(t, m, "lfinit_signals_forwarded_total") {
		total += v
	}
	if total != 8000 {
		t.Errorf("forwarded total = %v, want 8000", total)
	}
}

// get does one request against h and returns status and body.
func get(t *testing.T, h http.Handler, method, path string) (int, string, http.Header) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Code, rec.Body.String(), rec.Header()
}

func TestReadyz(t *testing.T) {
	m := New(BuildInfo{Version: "v"}, Sources{})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	fetch := func() (int, string) {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	if code, body := fetch(); code != 503 || body != "not ready\n" {
		t.Errorf("before SetReady: %d %q, want 503", code, body)
	}
	m.SetReady(true)
	if code, body := fetch(); code != 200 || body != "ok\n" {
		t.Errorf("ready: %d %q, want 200 ok", code, body)
	}
	// The shutdown hot path: the very next request must fail.
	m.SetReady(false)
	if code, body := fetch(); code != 503 || body != "not ready\n" {
		t.Errorf("right after SetReady(false): %d %q, want 503", code, body)
	}
}

func TestReadyzHeaders(t *testing.T) {
	m := New(BuildInfo{Version: "v"}, Sources{})
	m.SetReady(true)
	code, body, hdr := get(t, m.Handler(), http.MethodHead, "/readyz")
	if code != 200 || body != "" {
		t.Errorf("HEAD /readyz: %d %q", code, body)
	}
	if hdr.Get("Cache-Control") != "no-store" || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Errorf("headers: %v", hdr)
	}
}

func TestLivez(t *testing.T) {
	m := New(BuildInfo{Version: "v"}, Sources{})
	h := m.Handler()
	if code, body, _ := get(t, h, http.MethodGet, "/livez"); code != 200 || body != "ok\n" {
		t.Errorf("livez initially: %d %q, want 200 ok", code, body)
	}
	m.SetLive(false)
	if code, body, _ := get(t, h, http.MethodGet, "/livez"); code != 503 || body != "not live\n" {
		t.Errorf("livez after SetLive(false): %d %q, want 503", code, body)
	}
	m.SetLive(true)
	if code, _, _ := get(t, h, http.MethodGet, "/livez"); code != 200 {
		t.Errorf("livez after SetLive(true): %d", code)
	}
}

func TestRoutes(t *testing.T) {
	m := New(BuildInfo{Version: "v"}, Sources{})
	m.SetReady(true)
	h := m.Handler()
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/metrics", 200},
		{"HEAD", "/metrics", 200},
		{"GET", "/readyz?verbose=1", 200},
		{"GET", "/", 404},
		{"GET", "/metrics/", 404},
		{"GET", "/readyz/", 404},
		{"GET", "//readyz", 404},
		{"GET", "/debug/pprof/", 404},
		{"POST", "/nope", 404},
		{"POST", "/readyz", 405},
		{"PUT", "/livez", 405},
		{"DELETE", "/metrics", 405},
		{"OPTIONS", "/readyz", 405},
	} {
		code, _, hdr := get(t, h, tc.method, tc.path)
		if code != tc.code {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, code, tc.code)
		}
		if code == 405 && hdr.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %s: Allow = %q", tc.method, tc.path, hdr.Get("Allow"))
		}
	}
	_, body, _ := get(t, h, "GET", "/metrics")
	for _, want := range []string{`lfinit_phase{phase="starting"} 1`, `lfinit_phase{phase="stopped"} 0`, "go_goroutines", "process_"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestListenInUse(t *testing.T) {
	l1, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Close()
	addr := l1.Addr().String()
	l2, err := Listen(addr)
	if err == nil {
		l2.Close()
		t.Fatalf("second Listen(%s) succeeded", addr)
	}
	want := "metrics address " + addr + " is already in use (choose another with --metrics-addr)"
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("error does not unwrap to EADDRINUSE: %#v", err)
	}
}

func TestListenInvalid(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"", `invalid metrics address "": missing port in address`},
		{"9090", `invalid metrics address "9090": missing port in address`},
		{"127.0.0.1", `invalid metrics address "127.0.0.1": missing port in address`},
		{"127.0.0.1:99999", `invalid metrics address "127.0.0.1:99999": port "99999" is not a number from 0 to 65535`},
		{"127.0.0.1:-1", `invalid metrics address "127.0.0.1:-1": port "-1" is not a number`},
		{"127.0.0.1:http", `invalid metrics address "127.0.0.1:http": port "http" is not a number`},
		{":", `invalid metrics address ":": port "" is not a number`},
		{"::1:9090", `invalid metrics address "::1:9090": too many colons`},
	} {
		l, err := Listen(tc.addr)
		if err == nil {
			l.Close()
			t.Errorf("Listen(%q) succeeded", tc.addr)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Listen(%q) = %q, want prefix %q", tc.addr, err, tc.want)
		}
	}
}

func TestListenNotLocal(t *testing.T) {
	// 192.0.2.0/24 is TEST-NET-1: never an address of this host.
	l, err := Listen("192.0.2.1:9090")
	if err == nil {
		l.Close()
		t.Skip("192.0.2.1 is configured on this host")
	}
	if !strings.Contains(err.Error(), "192.0.2.1 is not an address of this host") {
		t.Errorf("error = %q", err)
	}
}

func TestServe(t *testing.T) {
	m := New(BuildInfo{Version: "v"}, Sources{})
	m.SetReady(true)
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := Serve(l, m.Handler())
	defer srv.Close()

	if srv.ReadHeaderTimeout != 5*time.Second || srv.ReadTimeout != 10*time.Second ||
		srv.WriteTimeout != 10*time.Second || srv.IdleTimeout != 60*time.Second || srv.MaxHeaderBytes != 16<<10 {
		t.Errorf("server limits = %+v", srv)
	}

	base := "http://" + l.Addr().String()
	client := &http.Client{Timeout: 5 * time.Second}
	for path, want := range map[string]string{
		"/metrics": `lfinit_phase{phase="starting"} 1`,
		"/readyz":  "ok\n",
		"/livez":   "ok\n",
	} {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %d, body lacks %q", path, resp.StatusCode, want)
		}
	}

	// Close stops serving.
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var d net.Dialer
	if c, err := d.DialContext(ctx, "tcp", l.Addr().String()); err == nil {
		c.Close()
		t.Error("still accepting after Close")
	}
}

func TestServeCloseAtOnce(t *testing.T) {
	// Closing before the goroutine has started serving must not leak the
	// listener: the port is free again afterwards.
	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	Serve(l, New(BuildInfo{Version: "v"}, Sources{}).Handler()).Close()
	deadline := time.Now().Add(2 * time.Second)
	for {
		l2, err := Listen(addr)
		if err == nil {
			l2.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("port still held after Close: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func BenchmarkStatus(b *testing.B) {
	m := New(BuildInfo{Version: "v"}, Sources{LiveChildren: func() int { return 1 }})
	t0 := time.Now()
	s := statusfile.Status{
		Phase: statusfile.Stopped, Ready: false, Outcome: ptr(statusfile.Graceful), ExitCode: ptr(0),
		SignalAt: &t0, GraceDeadline: ptr(t0.Add(8 * time.Second)), HardDeadline: ptr(t0.Add(8250 * time.Millisecond)),
		UpdatedAt: t0.Add(time.Second), Killed: 1, Reaped: 3,
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Status(s)
	}
}

func BenchmarkSignalForwarded(b *testing.B) {
	m := New(BuildInfo{Version: "v"}, Sources{})
	m.SignalForwarded("SIGTERM")
	b.ReportAllocs()
	for b.Loop() {
		m.SignalForwarded("SIGTERM")
	}
}

func BenchmarkReadyz(b *testing.B) {
	m := New(BuildInfo{Version: "v"}, Sources{})
	h := m.Handler()
	req := httptest.NewRequest(http.MethodGet, "/readyz", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}

func TestGathererHasOnlyLfinitSeries(t *testing.T) {
	m := New(BuildInfo{}, Sources{LogLinesDropped: func() int64 { return 0 }})
	m.Status(statusfile.Status{Phase: statusfile.Stopped, Outcome: ptr(statusfile.DeadlineExceeded), ExitCode: ptr(1), Killed: 2})
	mfs, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		got[mf.GetName()] = true
		if !strings.HasPrefix(mf.GetName(), "lfinit_") {
			t.Errorf("pushed family %s is not lfinit's", mf.GetName())
		}
	}
	for _, want := range []string{"lfinit_shutdown_outcome", "lfinit_exit_code", "lfinit_killed_processes", "lfinit_log_lines_dropped_total", "lfinit_build_info"} {
		if !got[want] {
			t.Errorf("pushed families lack %s", want)
		}
	}
}

package readiness

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
)

func TestParse(t *testing.T) {
	for _, ok := range []string{"127.0.0.1:8080", "localhost:1", "[::1]:80"} {
		if err := ParseReadyTCP(ok); err != nil {
			t.Errorf("ParseReadyTCP(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"8080", "127.0.0.1", "127.0.0.1:", "", "localhost:99999", "127.0.0.1:0", "bad_host!:80"} {
		if err := ParseReadyTCP(bad); err == nil {
			t.Errorf("ParseReadyTCP(%q) accepted", bad)
		}
	}
	for _, ok := range []string{"http://127.0.0.1:8080/healthz", "https://svc/ready"} {
		if err := ParseReadyHTTP(ok); err != nil {
			t.Errorf("ParseReadyHTTP(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"127.0.0.1:8080", "ftp://x/", "http://", "http:///path", "http://127.0.0.1:99999/x", "http://:99999/"} {
		if err := ParseReadyHTTP(bad); err == nil {
			t.Errorf("ParseReadyHTTP(%q) accepted", bad)
		}
	}
}

// waitReady fails the test unless ready closes within a generous bound;
// it reads the reports meanwhile, as the supervisor does, and returns them.
func waitReady(t *testing.T, ready <-chan struct{}, reports <-chan Report) []Report {
	t.Helper()
	var got []Report
	limit := time.After(10 * time.Second)
	for {
		select {
		case <-ready:
			return got
		case rep := <-reports:
			got = append(got, rep)
		case <-limit:
			t.Fatal("the check never passed")
		}
	}
}

func TestWatchTCP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := &Check{TCP: l.Addr().String(), Interval: 10 * time.Millisecond}
	ready, reports, stop := c.Watch()
	defer stop()
	if got := waitReady(t, ready, reports); len(got) != 0 {
		t.Errorf("reports for a check that passed at once: %v", got)
	}
}

func TestWatchHTTPWaitsFor2xx(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	c := &Check{HTTP: srv.URL + "/healthz", Interval: 10 * time.Millisecond}
	ready, reports, stop := c.Watch()
	defer stop()
	got := waitReady(t, ready, reports)
	if n := calls.Load(); n < 3 {
		t.Errorf("ready after %d answers; the first two were 503", n)
	}
	// The reason once (the second 503 is no news), then the pass.
	want := srv.URL + "/healthz answers 503 Service Unavailable"
	if len(got) != 2 || got[0].Err != want || got[0].Remind || got[1].Err != "" {
		t.Errorf("reports %+v, want %q then the pass", got, want)
	}
}

func TestStopEndsWatching(t *testing.T) {
	c := &Check{TCP: measure.FreeAddr(t), Interval: 10 * time.Millisecond} // the check cannot pass
	ready, _, stop := c.Watch()
	stop()
	stop() // idempotent
	select {
	case <-ready:
		t.Fatal("ready without a listener")
	case <-time.After(100 * time.Millisecond):
	}
}

func TestRefusedIsReported(t *testing.T) {
	addr := measure.FreeAddr(t)
	c := &Check{TCP: addr, Interval: 10 * time.Millisecond}
	_, reports, stop := c.Watch()
	defer stop()
	select {
	case rep := <-reports:
		if want := addr + " refuses connections"; rep.Err != want || rep.Remind {
			t.Errorf("first report %+v, want %q without a reminder", rep, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no report for a port nothing listens on")
	}
}

func TestReminderSchedule(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	m := newReminder(t0)
	refused := "127.0.0.1:8080 refuses connections"
	for _, step := range []struct {
		at     time.Duration
		why    string
		sent   bool
		remind bool
	}{
		{0, refused, true, false},                                   // a new reason at once
		{time.Second, refused, false, false},                        // the same: no news
		{FirstReminder, refused, true, true},                        // the first reminder
		{FirstReminder + time.Second, refused, false, false},        // not again so soon
		{FirstReminder + 2*time.Second, "timeout", true, false},     // a new reason
		{FirstReminder + Reminder, "timeout", true, true},           // the next reminder
		{FirstReminder + 3*Reminder + time.Second, "x", true, true}, // a late one: once, not three
		{FirstReminder + 3*Reminder + 2*time.Second, "x", false, false},
		{FirstReminder + 4*Reminder, "", true, false}, // the pass, never a reminder
	} {
		rep, sent := m.next(step.why, t0.Add(step.at))
		if sent != step.sent || (sent && (rep.Remind != step.remind || rep.Err != step.why || rep.Waited != step.at)) {
			t.Errorf("at %v (%q): sent=%v %+v, want sent=%v remind=%v", step.at, step.why, sent, rep, step.sent, step.remind)
		}
	}
}

func TestDescribe(t *testing.T) {
	tcp := &Check{TCP: "127.0.0.1:8080"}
	web := &Check{HTTP: "http://svc:8080/healthz"}
	for _, tc := range []struct {
		c    *Check
		err  error
		want string
	}{
		{tcp, &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, "127.0.0.1:8080 refuses connections"},
		{web, &url.Error{Op: "Get", URL: web.HTTP, Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, "svc:8080 refuses connections"},
		{web, statusError(503), "http://svc:8080/healthz answers 503 Service Unavailable"},
		{tcp, &net.DNSError{Name: "app", Err: "no such host", IsNotFound: true}, "cannot resolve app: no such host"},
		{tcp, context.DeadlineExceeded, "127.0.0.1:8080 does not answer within 1s"},
		{tcp, &net.OpError{Op: "dial", Err: syscall.EHOSTUNREACH}, "127.0.0.1:8080 is unreachable"},
		{web, &url.Error{Op: "Get", URL: web.HTTP, Err: errors.New("tls: bad certificate")}, "svc:8080: tls: bad certificate"},
	} {
		if got := tc.c.describe(tc.err, time.Second); got != tc.want {
			t.Errorf("describe(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

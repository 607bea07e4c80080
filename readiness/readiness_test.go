package readiness

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
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

// waitReady fails the test unless ready closes within a generous bound.
func waitReady(t *testing.T, ready <-chan struct{}) {
	t.Helper()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the check never passed")
	}
}

func TestWatchTCP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := &Check{TCP: l.Addr().String(), Interval: 10 * time.Millisecond}
	ready, stop := c.Watch()
	defer stop()
	waitReady(t, ready)
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
	ready, stop := c.Watch()
	defer stop()
	waitReady(t, ready)
	if n := calls.Load(); n < 3 {
		t.Errorf("ready after %d answers; the first two were 503", n)
	}
}

func TestStopEndsWatching(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens: the check cannot pass
	c := &Check{TCP: addr, Interval: 10 * time.Millisecond}
	ready, stop := c.Watch()
	stop()
	stop() // idempotent
	select {
	case <-ready:
		t.Fatal("ready without a listener")
	case <-time.After(100 * time.Millisecond):
	}
}

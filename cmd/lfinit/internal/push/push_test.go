package push

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/light-fabric/lfinit/metrics"
	"github.com/light-fabric/lfinit/statusfile"
)

// env is an environment; its get is the getenv Grouping reads.
type env map[string]string

func (e env) get(name string) string { return e[name] }

func TestGroupingDefaults(t *testing.T) {
	g := Grouping(map[string]string{"cluster": "c1"}, env{"POD_NAME": "web-1", "POD_NAMESPACE": "shop", "HOSTNAME": "other"}.get)
	if len(g) != 3 || g["pod"] != "web-1" || g["namespace"] != "shop" || g["cluster"] != "c1" {
		t.Errorf("grouping = %v", g)
	}
	if g := Grouping(nil, env{"HOSTNAME": "web-2"}.get); len(g) != 1 || g["pod"] != "web-2" {
		t.Errorf("grouping from HOSTNAME = %v", g)
	}
	if g := Grouping(map[string]string{"pod": "mine"}, env{"HOSTNAME": "web-2"}.get); g["pod"] != "mine" {
		t.Errorf("--push-grouping does not win: %v", g)
	}
}

// finalMetrics is a registry in the state lfinit pushes after a
// deadline-exceeded stop.
func finalMetrics() *metrics.Metrics {
	m := metrics.New(metrics.BuildInfo{Version: "test"}, metrics.Sources{})
	o, code := statusfile.DeadlineExceeded, 1
	now := time.Now()
	m.Status(statusfile.Status{Phase: statusfile.Stopped, Outcome: &o, ExitCode: &code, Killed: 2, SignalAt: &now, UpdatedAt: now.Add(time.Second)})
	return m
}

func TestPushFinal(t *testing.T) {
	var got atomic.Value
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Fail the first attempt: the push retries within its bound.
		if calls.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		user, pass, _ := r.BasicAuth()
		b, _ := io.ReadAll(r.Body)
		got.Store(r.Method + " " + r.URL.Path + " " + user + ":" + pass + " " + string(b))
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	var logs bytes.Buffer
	gw := strings.Replace(srv.URL, "http://", "http://u:secret@", 1)
	p := Config{Gateway: gw, Job: "lfinit", Timeout: 2 * time.Second}
	debug := &slog.HandlerOptions{Level: slog.LevelDebug} // the success line is at debug
	var gathers atomic.Int32
	g := countGathers(finalMetrics().Gatherer(), &gathers)
	err := Final(p, map[string]string{"pod": "web-1"}, g, slog.New(slog.NewTextHandler(&logs, debug)))
	if err != nil {
		t.Fatalf("push: %v\n%s", err, logs.String())
	}
	req, _ := got.Load().(string)
	if !strings.HasPrefix(req, "PUT /metrics/job/lfinit/pod/web-1 u:secret ") || !strings.Contains(req, "lfinit_shutdown_outcome") ||
		!strings.Contains(req, "deadline-exceeded") || strings.Contains(req, "go_goroutines") {
		t.Errorf("request %.300q", req)
	}
	if calls.Load() != 2 || !strings.Contains(logs.String(), "attempts=2") || strings.Contains(logs.String(), "secret") {
		t.Errorf("calls %d, logs %s", calls.Load(), logs.String())
	}
	// Gathered once: the retry pushes the same figures.
	if gathers.Load() != 1 {
		t.Errorf("gathered %d times for 2 attempts, want 1", gathers.Load())
	}
}

// countGathers is g, counting its Gather calls in n.
func countGathers(g prometheus.Gatherer, n *atomic.Int32) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		n.Add(1)
		return g.Gather()
	})
}

// The push timeout bounds the gathering too: with a collector that takes
// 2 s and a Pushgateway that answers at once, a 300ms push gives up after
// about 300ms, pushes nothing (no half-gathered figures) and says why once.
func TestPushTimeoutCoversGathering(t *testing.T) {
	var puts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		puts.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	slow := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		time.Sleep(2 * time.Second) // e.g. a /proc read on a crowded host
		return finalMetrics().Gatherer().Gather()
	})
	var logs bytes.Buffer
	p := Config{Gateway: srv.URL, Job: "lfinit", Timeout: 300 * time.Millisecond}
	start := time.Now()
	err := Final(p, nil, slow, slog.New(slog.NewTextHandler(&logs, nil)))
	took := time.Since(start)
	if err == nil || took < 250*time.Millisecond || took > time.Second {
		t.Errorf("push with a 2 s gather and a 300ms timeout: err %v after %v", err, took)
	}
	if puts.Load() != 0 {
		t.Errorf("%d PUTs reached the Pushgateway after the timeout", puts.Load())
	}
	if strings.Count(logs.String(), "\n") != 1 || !strings.Contains(logs.String(), "gathering the metrics took longer than the push timeout") {
		t.Errorf("logs: %q", logs.String())
	}
}

// A gateway that never answers costs at most the push timeout, and one
// WARN line.
func TestPushFinalBounded(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() // accepts nothing: connections hang in the backlog
	var logs bytes.Buffer
	p := Config{Gateway: "http://" + l.Addr().String(), Job: "lfinit", Timeout: 300 * time.Millisecond}
	start := time.Now()
	err = Final(p, nil, finalMetrics().Gatherer(), slog.New(slog.NewTextHandler(&logs, nil)))
	took := time.Since(start)
	if err == nil || took > 2*time.Second || took < 250*time.Millisecond {
		t.Errorf("push to a hung gateway: err %v after %v", err, took)
	}
	if strings.Count(logs.String(), "\n") != 1 || !strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("logs: %q", logs.String())
	}
	// A refused connection is retried until the bound too, and logged once.
	logs.Reset()
	l.Close()
	start = time.Now()
	if err := Final(p, nil, finalMetrics().Gatherer(), slog.New(slog.NewTextHandler(&logs, nil))); err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("refused: %v after %v", err, time.Since(start))
	}
	if strings.Count(logs.String(), "\n") != 1 {
		t.Errorf("logs: %q", logs.String())
	}
}

func TestLabelNames(t *testing.T) {
	for name, ok := range map[string]bool{
		"cluster": true, "_x": true, "Zone_2": true, "a1": true,
		"1a": false, "a-b": false, "é": false, "a b": false, "__meta": false, "job": false,
	} {
		err := Labels{}.Set(name + "=v")
		if (err == nil) != ok {
			t.Errorf("label name %q: err %v, want accepted %v", name, err, ok)
		}
	}
	if err := (Labels{}).Set("=v"); err == nil {
		t.Error("an empty label name was accepted")
	}
}

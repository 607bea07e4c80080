package main

import (
	"bytes"
	"errors"
	"fmt"
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

func TestPushFlags(t *testing.T) {
	c, err := parseArgs([]string{"--push-gateway", "http://pgw:9091", "--push-grouping", "cluster=prod,team=a", "--push-grouping", "zone=z1", "app"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.push.job != "lfinit" || c.push.timeout != DefaultPushTimeout || len(c.push.grouping.m) != 3 || c.push.grouping.m["zone"] != "z1" {
		t.Errorf("push config %+v", c.push)
	}
	// The push timeout counts in the budget only when there is a push.
	if c.opts.Budget.Push != DefaultPushTimeout {
		t.Errorf("budget push = %v", c.opts.Budget.Push)
	}
	c, _ = parseArgs([]string{"app"}, noEnv)
	if c.opts.Budget.Push != 0 {
		t.Errorf("budget push without a gateway = %v", c.opts.Budget.Push)
	}
	c, err = parseArgs([]string{"app"}, envOf("LFINIT_PUSH_GATEWAY", "https://pgw", "LFINIT_PUSH_JOB", "edge", "LFINIT_PUSH_TIMEOUT", "300ms"))
	if err != nil || c.push.gateway != "https://pgw" || c.push.job != "edge" || c.opts.Budget.Push != 300*time.Millisecond {
		t.Errorf("from variables: %+v %v", c.push, err)
	}
}

func TestPushUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--push-gateway", "pgw:9091", "app"}, "base URL"},
		{[]string{"--push-gateway", "ftp://pgw", "app"}, "base URL"},
		{[]string{"--push-gateway", "http://pgw", "--push-job", "", "app"}, "--push-job: the job name of the push cannot be empty"},
		{[]string{"--push-gateway", "http://pgw:99999", "app"}, "base URL"},
		{[]string{"--push-gateway", "http://pgw", "--push-timeout", "0", "app"}, "--push-timeout"},
		{[]string{"--push-grouping", "cluster", "app"}, "NAME=VALUE"},
		{[]string{"--push-grouping", "cluster=", "app"}, "NAME=VALUE"},
		{[]string{"--push-grouping", "1x=a", "app"}, "label name"},
		{[]string{"--push-grouping", "job=a", "app"}, "lfinit's own series"},
		{[]string{"--push-grouping", "signal=a", "app"}, "lfinit's own series"},
		{[]string{"--push-grouping", "cluster=" + strings.Repeat("x", 1025), "app"}, `the value of label "cluster" is 1025 bytes; the limit is 1 KiB (1024 bytes)`},
		{[]string{"--push-grouping", strings.Repeat("n", 129) + "=a", "app"}, "is 129 bytes; the limit is 128 bytes"},
		{[]string{"--push-grouping", manyLabels(17), "app"}, "more than 16 grouping labels"},
		{[]string{"--push-grouping", manyLabels(10), "--push-grouping", "x1=a,x2=a,x3=a,x4=a,x5=a,x6=a,x7=a", "app"}, "more than 16 grouping labels"},
		// grace 8s + floor 250ms + push 1s + allowance 1s = 10.25s.
		{[]string{"--push-gateway", "http://pgw", "--stop-timeout", "10s", "app"}, "push 1s"},
	} {
		_, err := parseArgs(tc.args, noEnv)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(ue.msg, tc.msg) {
			t.Errorf("parseArgs(%q) = %v, want a usage error saying %q", tc.args, err, tc.msg)
		}
	}
}

// manyLabels is n grouping labels l0=v … in one value.
func manyLabels(n int) string {
	var pairs []string
	for i := range n {
		pairs = append(pairs, fmt.Sprintf("l%d=v", i))
	}
	return strings.Join(pairs, ",")
}

// The bounds of --push-grouping are inclusive, and a name given twice
// counts once.
func TestPushGroupingAtItsBounds(t *testing.T) {
	for _, args := range [][]string{
		{"--push-grouping", "cluster=" + strings.Repeat("x", 1024)},
		{"--push-grouping", strings.Repeat("n", 128) + "=a"},
		{"--push-grouping", manyLabels(16)},
		{"--push-grouping", manyLabels(16), "--push-grouping", manyLabels(16)},
	} {
		if _, err := parseArgs(append(args, "app"), noEnv); err != nil {
			t.Errorf("parseArgs(%.60q…) = %v, want it accepted", args, err)
		}
	}
}

func TestBudgetCountsThePush(t *testing.T) {
	var out, errOut strings.Builder
	code := runSubcommand("budget", []string{"--stop-timeout=10s"}, envOf("LFINIT_PUSH_GATEWAY", "http://pgw"), &out, &errOut)
	if code != 1 || !strings.Contains(out.String(), "push 1s") || !strings.Contains(out.String(), "terminationGracePeriodSeconds: 11") ||
		!strings.Contains(out.String(), "t0+9.25s") {
		t.Errorf("budget with a push: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := runSubcommand("budget", []string{"--stop-timeout=10s"}, noEnv, &out, &errOut); code != 0 || strings.Contains(out.String(), "push") {
		t.Errorf("budget without a push: exit %d\n%s", code, out.String())
	}
}

func TestGroupingDefaults(t *testing.T) {
	g := groupingFor(map[string]string{"cluster": "c1"}, envOf("POD_NAME", "web-1", "POD_NAMESPACE", "shop", "HOSTNAME", "other"))
	if len(g) != 3 || g["pod"] != "web-1" || g["namespace"] != "shop" || g["cluster"] != "c1" {
		t.Errorf("grouping = %v", g)
	}
	if g := groupingFor(nil, envOf("HOSTNAME", "web-2")); len(g) != 1 || g["pod"] != "web-2" {
		t.Errorf("grouping from HOSTNAME = %v", g)
	}
	if g := groupingFor(map[string]string{"pod": "mine"}, envOf("HOSTNAME", "web-2")); g["pod"] != "mine" {
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
	p := pushConfig{gateway: gw, job: "lfinit", timeout: 2 * time.Second}
	debug := &slog.HandlerOptions{Level: slog.LevelDebug} // the success line is at debug
	var gathers atomic.Int32
	g := countGathers(finalMetrics().Gatherer(), &gathers)
	err := pushFinal(p, map[string]string{"pod": "web-1"}, g, slog.New(slog.NewTextHandler(&logs, debug)))
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
	p := pushConfig{gateway: srv.URL, job: "lfinit", timeout: 300 * time.Millisecond}
	start := time.Now()
	err := pushFinal(p, nil, slow, slog.New(slog.NewTextHandler(&logs, nil)))
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
	p := pushConfig{gateway: "http://" + l.Addr().String(), job: "lfinit", timeout: 300 * time.Millisecond}
	start := time.Now()
	err = pushFinal(p, nil, finalMetrics().Gatherer(), slog.New(slog.NewTextHandler(&logs, nil)))
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
	if err := pushFinal(p, nil, finalMetrics().Gatherer(), slog.New(slog.NewTextHandler(&logs, nil))); err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("refused: %v after %v", err, time.Since(start))
	}
	if strings.Count(logs.String(), "\n") != 1 {
		t.Errorf("logs: %q", logs.String())
	}
}

func TestUnwritableTerminationLogFailsAtStartup(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{dir + "/missing/termination-log", dir} {
		_, err := prepare(&config{termLog: path})
		if err == nil || !strings.Contains(err.Error(), "--termination-log") {
			t.Errorf("prepare(termination log %s) = %v, want an error naming --termination-log", path, err)
		}
	}
	if _, err := prepare(&config{termLog: dir + "/termination-log"}); err != nil {
		t.Errorf("writable termination log: %v", err)
	}
	if _, err := prepare(&config{termLog: "none"}); err != nil {
		t.Errorf("none: %v", err)
	}
}

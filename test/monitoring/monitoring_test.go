// Package monitoring checks, with Debian's real Prometheus and Pushgateway,
// that what lfinit publishes arrives where an SRE looks: the ready phase,
// the signal counters (at 0 before the first signal, then 1), the shutdown
// phases, and, through the Pushgateway, the final outcome, exit code and
// killed count of a deadline-exceeded run, which no scrape of lfinit itself
// can see (it exits the moment the tree is gone).
//
// Prometheus and the Pushgateway run as this test's own processes, on
// 127.0.0.1 with free ports and all their state in the test's temp dir
// (Prometheus' TSDB, the Pushgateway's persistence file), never as the system
// services. lfinit runs as PID 1 of a new PID namespace, which needs root;
// without root or the tools the test skips and says why.
package monitoring

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
)

// tools are the binaries the test runs; scripts/install-qualification-deps
// installs them (Debian packages prometheus and prometheus-pushgateway).
var tools = []string{"prometheus", "prometheus-pushgateway", "promtool", "unshare"}

func skipUnlessReady(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Prometheus and the Pushgateway (-short); scripts/test runs it")
	}
	if os.Geteuid() != 0 {
		t.Skip("the monitoring test runs lfinit as PID 1 with unshare --pid, which needs root (run it as root, as CI does)")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (scripts/install-qualification-deps installs it): %v", tool, err)
		}
	}
}

// build compiles pkg into dir and returns the binary's path.
func build(t *testing.T, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// daemon starts a server process that the test stops at its end, and
// returns its output.
func daemon(t *testing.T, name string, args ...string) *measure.Buffer {
	t.Helper()
	out := &measure.Buffer{}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, out.String())
		}
	})
	return out
}

// waitHTTP waits until url answers 200.
func waitHTTP(t *testing.T, url string, limit time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("%s did not answer 200 within %v", url, limit)
}

const promConfig = `global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: lfinit-direct
    static_configs:
      - targets: ["%s"]
  - job_name: pushgateway
    # The pushed series keep their own job and grouping labels.
    honor_labels: true
    static_configs:
      - targets: ["%s"]
`

// startPrometheus runs Prometheus scraping lfinit at lfinitAddr and the
// Pushgateway at pgwAddr every second; it returns its base URL.
func startPrometheus(t *testing.T, dir, lfinitAddr, pgwAddr string) string {
	t.Helper()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(promConfig, lfinitAddr, pgwAddr)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("promtool", "check", "config", cfg).CombinedOutput(); err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
	addr := measure.FreeAddr(t)
	daemon(t, "prometheus", "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+addr, "--log.level=warn")
	base := "http://" + addr
	waitHTTP(t, base+"/-/ready", 30*time.Second)
	return base
}

// sample is one series of an instant query's answer.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// query asks Prometheus's HTTP API for the instant vector of expr.
func query(t *testing.T, base, expr string) []sample {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		t.Fatalf("query %s: %v", expr, err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []sample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s %s", expr, err, r.Status, r.Error)
	}
	return r.Data.Result
}

// eventually waits until expr returns exactly one series whose value
// satisfies ok, and returns that value.
func eventually(t *testing.T, base, expr string, limit time.Duration, ok func(float64) bool) float64 {
	t.Helper()
	var last []sample
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		last = query(t, base, expr)
		if len(last) == 1 {
			s, _ := last[0].Value[1].(string)
			if v, err := strconv.ParseFloat(s, 64); err == nil && ok(v) {
				return v
			}
		}
	}
	t.Fatalf("Prometheus: %s did not come true within %v; last answer %v", expr, limit, last)
	return 0
}

func equals(want float64) func(float64) bool { return func(v float64) bool { return v == want } }

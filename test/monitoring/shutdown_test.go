package monitoring

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
)

// TestShutdownReachesPrometheus runs one deadline-exceeded shutdown under
// a real Prometheus: what it scrapes from lfinit while it runs, and what
// the Pushgateway holds once lfinit is gone.
func TestShutdownReachesPrometheus(t *testing.T) {
	skipUnlessReady(t)
	dir := t.TempDir()
	lfinit := build(t, dir, "../../cmd/lfinit")
	helper := build(t, dir, "../helper")

	pgwAddr := measure.FreeAddr(t)
	// The Pushgateway keeps its groups in the test's temp dir: with
	// Debian's default file (/var/lib/prometheus/pushgateway.data) this
	// run's group would be served by the next Pushgateway started.
	persisted := filepath.Join(dir, "pushgateway.data")
	t.Cleanup(func() { // runs after daemon's cleanup has stopped it
		if _, err := os.Stat(persisted); err != nil {
			t.Errorf("the Pushgateway did not write its state to the test's %s: %v", persisted, err)
		}
	})
	daemon(t, "prometheus-pushgateway", "--web.listen-address="+pgwAddr, "--persistence.file="+persisted)
	waitHTTP(t, "http://"+pgwAddr+"/-/ready", 15*time.Second)
	lfinitAddr := measure.FreeAddr(t)
	prom := startPrometheus(t, dir, lfinitAddr, pgwAddr)

	// Each phase of the shutdown lasts over two seconds, so 1s scrapes see
	// it even on a loaded machine: quiescing 2.5s, draining 2.5s (the
	// helper ignores TERM), then the
	// floor and SIGKILL: deadline-exceeded, exit 1, two processes killed.
	pod := "monitoring-test-" + strconv.Itoa(int(time.Now().UnixNano()%1e9))
	cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc", lfinit,
		"--metrics-addr", lfinitAddr, "--push-gateway", "http://"+pgwAddr, "--push-grouping", "test=monitoring",
		"--log-level", "debug", "--drain-delay", "2500ms", "--grace", "5s", "--floor", "300ms", "--termination-log", "none",
		"--", helper, "-ignore", "15", "-children", "1", "-children-ignore-term")
	cmd.Env = append(cmd.Environ(), "POD_NAME="+pod, "POD_NAMESPACE=monitoring")
	stderr := &measure.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan int, 1)
	go func() { cmd.Wait(); exited <- cmd.ProcessState.ExitCode() }()
	t.Cleanup(func() {
		syscall.Kill(cmd.Process.Pid, syscall.SIGKILL) // unshare; the namespace dies with its PID 1
		if t.Failed() {
			t.Logf("lfinit stderr:\n%s", stderr.String())
		}
	})

	direct := `{job="lfinit-direct"}`
	sel := func(name, labels string) string {
		return name + strings.Replace(direct, "}", labels+"}", 1)
	}
	eventually(t, prom, sel("lfinit_phase", `,phase="ready"`), 20*time.Second, equals(1))
	// Before any signal the counters are there, at 0: increase() will see the first.
	eventually(t, prom, sel("lfinit_signals_received_total", `,signal="SIGTERM"`), 5*time.Second, equals(0))
	eventually(t, prom, sel("lfinit_signals_forwarded_total", `,signal="SIGTERM"`), 5*time.Second, equals(0))
	eventually(t, prom, sel("lfinit_ready_timestamp_seconds", "")+" - "+sel("lfinit_start_time_seconds", ""), 5*time.Second,
		func(v float64) bool { return v >= 0 && v < 10 })
	eventually(t, prom, sel("lfinit_build_info", `,goos="linux"`), 5*time.Second, equals(1))
	promtoolCheck(t, "http://"+lfinitAddr+"/metrics")

	// SIGTERM to lfinit: unshare's child, PID 1 of the namespace.
	lfinitPid := childOf(t, cmd.Process.Pid)
	if err := syscall.Kill(lfinitPid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually(t, prom, sel("lfinit_signals_received_total", `,signal="SIGTERM"`), 10*time.Second, equals(1))
	eventually(t, prom, "increase("+sel("lfinit_signals_received_total", `,signal="SIGTERM"`)+"[1m])", 10*time.Second,
		func(v float64) bool { return v > 0 })
	for _, phase := range []string{"quiescing", "draining"} {
		eventually(t, prom, "max_over_time("+sel("lfinit_phase", `,phase="`+phase+`"`)+"[1m])", 10*time.Second, equals(1))
	}

	select {
	case code := <-exited:
		if code != 1 {
			t.Fatalf("lfinit exited %d, want 1 (deadline-exceeded)", code)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("lfinit did not exit")
	}
	if !strings.Contains(stderr.String(), "pushed the final metrics") {
		t.Errorf("no push in the log")
	}

	// What no scrape of lfinit could see arrives through the Pushgateway.
	pushed := `{job="lfinit",pod="` + pod + `",namespace="monitoring",test="monitoring"`
	eventually(t, prom, `lfinit_shutdown_outcome`+pushed+`,outcome="deadline-exceeded"}`, 10*time.Second, equals(1))
	eventually(t, prom, `lfinit_shutdown_outcome`+pushed+`,outcome="graceful"}`, 5*time.Second, equals(0))
	eventually(t, prom, `lfinit_exit_code`+pushed+`}`, 5*time.Second, equals(1))
	eventually(t, prom, `lfinit_killed_processes`+pushed+`}`, 5*time.Second, func(v float64) bool { return v >= 2 })
	eventually(t, prom, `lfinit_phase`+pushed+`,phase="stopped"}`, 5*time.Second, equals(1))
	eventually(t, prom, `lfinit_shutdown_duration_seconds`+pushed+`}`, 5*time.Second,
		func(v float64) bool { return v >= 3 && v < 10 })
	// The fleet query of the README.
	eventually(t, prom, `count(lfinit_shutdown_outcome{outcome="deadline-exceeded",pod="`+pod+`"} == 1)`, 5*time.Second, equals(1))
}

// promtoolCheck runs promtool check metrics on one scrape of url.
func promtoolCheck(t *testing.T, url string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cmd := exec.Command("promtool", "check", "metrics")
	cmd.Stdin = strings.NewReader(string(body))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// childOf waits for the first child of ppid (lfinit, under unshare).
func childOf(t *testing.T, ppid int) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		out, _ := exec.Command("pgrep", "-P", strconv.Itoa(ppid)).Output()
		if f := strings.Fields(string(out)); len(f) > 0 {
			pid, _ := strconv.Atoi(f[0])
			return pid
		}
	}
	t.Fatalf("no child of %d", ppid)
	return 0
}

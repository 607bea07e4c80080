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
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/light-fabric/lfinit/internal/testkit/measure"
	"github.com/light-fabric/lfinit/internal/testkit/memdir"
)

// kitWindow replaces the rules' freshness window (3600 s, [1h]) so that a
// stale group is seen going stale within the test.
const kitWindow = 45

// kitRules is deploy/prometheus/lfinit.rules.yml with the window shortened.
func kitRules(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile("../../deploy/prometheus/lfinit.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Count(s, "3600") < 2 || strings.Count(s, "[1h]") < 1 {
		t.Fatal("the rules file no longer states its window as 3600 and [1h]; update kitRules")
	}
	s = strings.ReplaceAll(s, "3600", strconv.Itoa(kitWindow))
	s = strings.ReplaceAll(s, "[1h]", "["+strconv.Itoa(kitWindow)+"s]")
	if err := os.WriteFile(filepath.Join(dir, "lfinit.rules.yml"), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// kitConfig is deploy/prometheus/prometheus.yml with the test's targets,
// 1 s scrapes and evaluations.
func kitConfig(t *testing.T, dir, pgwAddr string, pods map[string]string) string {
	t.Helper()
	b, err := os.ReadFile("../../deploy/prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	static := "      - targets: [\"app-1.example.com:9090\"]\n        labels:\n          namespace: default\n          pod: app-1\n"
	var targets strings.Builder
	for pod, addr := range pods {
		fmt.Fprintf(&targets, "      - targets: [%q]\n        labels:\n          namespace: kit-test\n          pod: %s\n", addr, pod)
	}
	for old, repl := range map[string]string{
		static:                                   targets.String(),
		"prometheus-pushgateway.monitoring:9091": pgwAddr,
		"scrape_interval: 15s":                   "scrape_interval: 1s",
	} {
		if !strings.Contains(s, old) {
			t.Fatalf("prometheus.yml has no %q; update kitConfig", old)
		}
		s = strings.ReplaceAll(s, old, repl)
	}
	s = "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n" + s
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("promtool", "check", "config", cfg).CombinedOutput(); err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
	return cfg
}

// kitRun is one lfinit run as PID 1 of a new PID namespace, as pod POD.
type kitRun struct {
	cmd    *exec.Cmd
	exited chan int
	stderr *measure.Buffer
}

func startKitRun(t *testing.T, lfinit, helper, dir, pod, metricsAddr, pgwAddr string, childArgs ...string) *kitRun {
	t.Helper()
	args := []string{"--pid", "--fork", "--mount-proc", lfinit,
		"--metrics-addr", metricsAddr, "--push-gateway", "http://" + pgwAddr,
		"--status-file", filepath.Join(dir, pod, "status.json"),
		"--grace", "2s", "--floor", "300ms", "--termination-log", "none", "--", helper}
	r := &kitRun{cmd: exec.Command("unshare", append(args, childArgs...)...), exited: make(chan int, 1), stderr: &measure.Buffer{}}
	r.cmd.Env = append(r.cmd.Environ(), "POD_NAME="+pod, "POD_NAMESPACE=kit-test")
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.cmd.Wait(); r.exited <- r.cmd.ProcessState.ExitCode() }()
	t.Cleanup(func() {
		syscall.Kill(r.cmd.Process.Pid, syscall.SIGKILL) // unshare; the namespace dies with its PID 1
		if t.Failed() {
			t.Logf("lfinit (%s) stderr:\n%s", pod, r.stderr.String())
		}
	})
	return r
}

func (r *kitRun) stop(t *testing.T, want int) {
	t.Helper()
	if err := syscall.Kill(childOf(t, r.cmd.Process.Pid), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-r.exited:
		if code != want {
			t.Errorf("lfinit exited %d, want %d", code, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("lfinit did not exit")
	}
}

// queryRange asks for expr over [start, now] every second and returns the
// number of series.
func queryRange(t *testing.T, base, expr string, start time.Time) int {
	t.Helper()
	v := url.Values{"query": {expr}, "start": {strconv.FormatInt(start.Unix(), 10)},
		"end": {strconv.FormatInt(time.Now().Unix(), 10)}, "step": {"1"}}
	resp, err := http.Get(base + "/api/v1/query_range?" + v.Encode())
	if err != nil {
		t.Fatalf("query_range %s: %v", expr, err)
	}
	defer resp.Body.Close()
	var r struct {
		Status, Error string
		Data          struct{ Result []json.RawMessage }
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Errorf("query_range %s: %v %s %s", expr, err, r.Status, r.Error)
	}
	return len(r.Data.Result)
}

// never checks for a while that expr has no series.
func never(t *testing.T, base, expr string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if got := query(t, base, expr); len(got) != 0 {
			t.Errorf("%s: %v, want nothing", expr, got)
			return
		}
	}
}

// TestOperatorKit runs the kit of deploy/ (the rules, with a 45 s
// freshness window, and the static scrape configuration) in a real
// Prometheus, scraping two lfinit runs and the real Pushgateway they push
// to: the run that ends deadline-exceeded makes
// LfinitDeadlineExceededOutsideRollout pending or firing and the graceful
// one alerts nothing; every query of the Grafana dashboard returns series;
// once its push is older than the window the deadline no longer counts and
// the alert ends, though the group is still in the Pushgateway, until the
// delete API removes it.
func TestOperatorKit(t *testing.T) {
	skipUnlessReady(t)
	begun := time.Now()
	dir := t.TempDir()
	lfinit := build(t, dir, "../../cmd/lfinit")
	helper := build(t, dir, "../helper")

	pgwAddr := measure.FreeAddr(t)
	// Its state in the temp dir: Debian's default persists across runs.
	daemon(t, "prometheus-pushgateway", "--web.listen-address="+pgwAddr,
		"--persistence.file="+filepath.Join(dir, "pushgateway.data"))
	waitHTTP(t, "http://"+pgwAddr+"/-/ready", 15*time.Second)

	// Deployment-style pod names: the rules derive workload from them.
	const late, clean = "kitlate-7d9f8b6c5d-x2x4z", "kitclean-7d9f8b6c5d-b5kpt"
	lateAddr, cleanAddr := measure.FreeAddr(t), measure.FreeAddr(t)
	kitRules(t, dir)
	cfg := kitConfig(t, dir, pgwAddr, map[string]string{late: lateAddr, clean: cleanAddr})
	promAddr := measure.FreeAddr(t)
	daemon(t, "prometheus", "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	prom := "http://" + promAddr
	waitHTTP(t, prom+"/-/ready", 30*time.Second)

	// late ignores SIGTERM and so does its child: deadline-exceeded, exit
	// 1, both SIGKILLed. clean dies by SIGTERM: graceful, 143.
	// The status files in memory: a final write held by a busy disk would
	// hold lfinit's exit, and its push, for a second.
	statusDir := memdir.New(t)
	lateRun := startKitRun(t, lfinit, helper, statusDir, late, lateAddr, pgwAddr, "-ignore", "15", "-children", "1", "-children-ignore-term")
	cleanRun := startKitRun(t, lfinit, helper, statusDir, clean, cleanAddr, pgwAddr)
	for _, pod := range []string{late, clean} {
		eventually(t, prom, `lfinit_phase{job="lfinit-static",pod="`+pod+`",phase="ready"}`, 30*time.Second, equals(1))
	}
	time.Sleep(3 * time.Second) // a few scrapes for rate() and increase()
	lateRun.stop(t, 1)
	cleanRun.stop(t, 143)

	fresh := func(pod, workload, outcome string) string {
		return `lfinit:shutdown_outcome:fresh{namespace="kit-test",pod="` + pod + `",workload="` + workload + `",outcome="` + outcome + `"}`
	}
	eventually(t, prom, fresh(late, "kitlate", "deadline-exceeded"), 20*time.Second, equals(1))
	eventually(t, prom, fresh(clean, "kitclean", "graceful"), 20*time.Second, equals(1))
	alert := `ALERTS{alertname="LfinitDeadlineExceededOutsideRollout",namespace="kit-test",workload="kitlate"}`
	eventually(t, prom, `count(`+alert+`)`, 20*time.Second, equals(1))
	state := query(t, prom, alert)[0].Metric["alertstate"]
	t.Logf("%s is %s, %.1fs after the test began", alert, state, time.Since(begun).Seconds())
	// The graceful stop, counted, alerts nothing; both pushes arrived, so
	// no push is missing (the scraped and pushed series join on pod). The
	// rule cannot tell a Pushgateway scrape that failed (a busy machine,
	// 1 s timeouts) from a missing push, and the scraped series go stale
	// the moment a run exits: LfinitPushMissing may be pending for an
	// evaluation (its for: 5m is there for that). So first a quiet moment,
	// then none for 5 s; a push really missing keeps it pending.
	quiet := `ALERTS{workload="kitclean"} or ALERTS{pod="` + clean + `"} or ALERTS{alertname="LfinitPushMissing"}`
	eventually(t, prom, `count(`+quiet+`) or vector(0)`, 20*time.Second, equals(0))
	never(t, prom, quiet, 5*time.Second)

	checkDashboardQueries(t, prom, begun)

	// The window passes: the group stays, but no longer counts.
	eventually(t, prom, `count(push_time_seconds{job="lfinit",pod="`+late+`"})`, 5*time.Second, equals(1))
	pushed := query(t, prom, `push_time_seconds{job="lfinit",pod="`+late+`"}`)[0].Value[1].(string)
	at, _ := strconv.ParseFloat(pushed, 64)
	wait := time.Until(time.Unix(int64(at), 0).Add(kitWindow*time.Second)) + 20*time.Second
	eventually(t, prom, `count(lfinit:push_fresh{pod="`+late+`"}) or vector(0)`, wait, equals(0))
	eventually(t, prom, `count(`+alert+`) or vector(0)`, 10*time.Second, equals(0))
	eventually(t, prom, `count(push_time_seconds{job="lfinit",pod="`+late+`"})`, 5*time.Second, equals(1))
	eventually(t, prom, `lfinit_shutdown_outcome{job="lfinit",pod="`+late+`",outcome="deadline-exceeded"}`, 5*time.Second, equals(1))

	// The cleanup the README gives: DELETE the group by its whole grouping key.
	req, _ := http.NewRequest(http.MethodDelete, "http://"+pgwAddr+"/metrics/job/lfinit/namespace/kit-test/pod/"+late, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("DELETE the group: %s", resp.Status)
	}
	eventually(t, prom, `count(push_time_seconds{job="lfinit",pod="`+late+`"}) or vector(0)`, 10*time.Second, equals(0))
	eventually(t, prom, `count(push_time_seconds{job="lfinit",pod="`+clean+`"})`, 5*time.Second, equals(1))
}

// checkDashboardQueries runs every query of deploy/grafana/lfinit.json (its
// variables set to "all") over the test so far: each returns series.
func checkDashboardQueries(t *testing.T, prom string, since time.Time) {
	t.Helper()
	b, err := os.ReadFile("../../deploy/grafana/lfinit.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	vars := strings.NewReplacer("$namespace", ".*", "$workload", ".*", "$__rate_interval", "5s")
	n := 0
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		// label_values(SELECTOR, LABEL): the selector has series with the label.
		inner, ok := strings.CutPrefix(v.Definition, "label_values(")
		i := strings.LastIndex(inner, ",")
		if !ok || i < 0 {
			t.Errorf("variable %s: %q is not label_values(selector, label)", v.Name, v.Definition)
			continue
		}
		sel, label := vars.Replace(inner[:i]), strings.TrimSuffix(strings.TrimSpace(inner[i+1:]), ")")
		if got := queryRange(t, prom, "count by ("+label+") ("+sel+")", since); got == 0 {
			t.Errorf("variable %s: %s has no series with %s", v.Name, sel, label)
		}
		n++
	}
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			expr := vars.Replace(q.Expr)
			if got := queryRange(t, prom, expr, since); got == 0 {
				t.Errorf("dashboard panel %q: no series for %s", p.Title, expr)
			}
			n++
		}
	}
	t.Logf("%d dashboard queries returned series", n)
}

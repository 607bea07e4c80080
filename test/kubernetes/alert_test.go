package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// alertWindow replaces the rules' freshness window (3600 s, [1h]), as
// test/monitoring does, so that nothing of an earlier run could count.
const alertWindow = 300

// daemon starts a program of the test's own, its output in dir, killed
// and waited for when the test ends.
func daemon(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, filepath.Base(name)+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("%s's log, its end:\n%s", filepath.Base(name), b)
		}
	})
}

// hostPort is a TCP port on the host's address on the bridge that
// nothing listens on now: pods reach the host there.
func hostPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", hostAddr+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitHTTP waits until url answers 200.
func waitHTTP(t *testing.T, url string) {
	t.Helper()
	err := poll(context.Background(), 60*time.Second, url+" to answer", func() (bool, error) {
		resp, err := http.Get(url)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// kitYAML is a file of deploy/prometheus as a map.
func kitYAML(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../deploy/prometheus", file))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m
}

// kitJob is the scrape job named job of a file of deploy/prometheus.
func kitJob(t *testing.T, file, job string) map[string]any {
	t.Helper()
	jobs, _ := kitYAML(t, file)["scrape_configs"].([]any)
	for _, j := range jobs {
		if m, ok := j.(map[string]any); ok && m["job_name"] == job {
			return m
		}
	}
	t.Fatalf("%s has no job %s; update the test", file, job)
	return nil
}

// kitPrometheusConfig writes a Prometheus configuration made of the kit:
// the lfinit-pods job of kubernetes-pods.yml, discovering the pods of
// namespace ns through the node's apiserver with the admin's certificate,
// the pushgateway job of prometheus.yml with the test's Pushgateway as
// its target, and lfinit.rules.yml with its window shortened; scrapes and
// evaluations every second.
func kitPrometheusConfig(t *testing.T, dir, ns, pushgateway string) string {
	t.Helper()
	b, err := os.ReadFile("../../deploy/prometheus/lfinit.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	rules := string(b)
	if strings.Count(rules, "3600") < 2 || strings.Count(rules, "[1h]") < 1 {
		t.Fatal("the rules file no longer states its window as 3600 and [1h]; update the test")
	}
	rules = strings.ReplaceAll(rules, "3600", strconv.Itoa(alertWindow))
	rules = strings.ReplaceAll(rules, "[1h]", "["+strconv.Itoa(alertWindow)+"s]")
	rulesFile := filepath.Join(dir, "lfinit.rules.yml")
	if err := os.WriteFile(rulesFile, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}

	pods := kitJob(t, "kubernetes-pods.yml", "lfinit-pods")
	sds, _ := pods["kubernetes_sd_configs"].([]any)
	if len(sds) != 1 {
		t.Fatalf("the lfinit-pods job has %d kubernetes_sd_configs, want 1; update the test", len(sds))
	}
	// In a cluster, Prometheus finds the apiserver and its credentials in
	// its pod; here they are named.
	sd := sds[0].(map[string]any)
	sd["api_server"] = fmt.Sprintf("https://127.0.0.1:%d", theNode.ports["apiserver"])
	sd["tls_config"] = map[string]any{
		"ca_file":   theNode.pki.path("ca.crt"),
		"cert_file": theNode.pki.path("admin.crt"),
		"key_file":  theNode.pki.path("admin.key"),
	}
	sd["namespaces"] = map[string]any{"names": []any{ns}}
	pods["scrape_interval"] = "1s"

	pgw := kitJob(t, "prometheus.yml", "pushgateway")
	pgw["static_configs"] = []any{map[string]any{"targets": []any{pushgateway}}}

	cfg := map[string]any{
		"global": map[string]any{
			"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s",
		},
		"rule_files":     []any{rulesFile},
		"scrape_configs": []any{pods, pgw},
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// promVector is the value of each series of an instant query.
func promVector(t *testing.T, prom, expr string) ([]map[string]string, []float64) {
	t.Helper()
	resp, err := http.Get(prom + "/api/v1/query?" + url.Values{"query": {expr}}.Encode())
	if err != nil {
		t.Fatalf("query %s: %v", expr, err)
	}
	defer resp.Body.Close()
	var r struct {
		Status, Error string
		Data          struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s %s", expr, err, r.Status, r.Error)
	}
	var labels []map[string]string
	var values []float64
	for _, s := range r.Data.Result {
		v, _ := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64)
		labels, values = append(labels, s.Metric), append(values, v)
	}
	return labels, values
}

// promAlert is an alert of Prometheus's /api/v1/alerts.
type promAlert struct {
	Labels   map[string]string
	State    string
	ActiveAt time.Time
	Value    string
}

func promAlerts(t *testing.T, prom string) []promAlert {
	t.Helper()
	resp, err := http.Get(prom + "/api/v1/alerts")
	if err != nil {
		t.Fatalf("alerts: %v", err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   struct{ Alerts []promAlert }
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Fatalf("alerts: %v %s", err, r.Status)
	}
	return r.Data.Alerts
}

// TestDeadlineExceededReachesTheAlert: the operator kit without the
// operator, against the node. An upstream Prometheus (./prometheus builds
// it, with Kubernetes discovery) runs the kit's lfinit-pods job, which
// discovers the pod through the apiserver and scrapes lfinit by its port
// named lfinit, the kit's pushgateway job and its rules; Debian's
// Pushgateway runs on the host's bridge address. The pod's service and its
// child ignore SIGTERM; deleted, lfinit runs out of its grace, SIGKILLs
// them, pushes outcome deadline-exceeded and exits 1, and
// LfinitDeadlineExceededOutsideRollout fires for the pod's workload.
func TestDeadlineExceededReachesTheAlert(t *testing.T) {
	if _, err := exec.LookPath("prometheus-pushgateway"); err != nil {
		t.Skip("prometheus-pushgateway is missing: run scripts/install-deps as root")
	}
	out, err := exec.Command("./prometheus").Output()
	if err != nil {
		t.Fatalf("./prometheus: %v", err)
	}
	prometheus := strings.TrimSpace(string(out))
	dir := t.TempDir()
	ns := namespace(t)

	// Its state in the temp dir: Debian's default persists across runs.
	pgwAddr := fmt.Sprintf("%s:%d", hostAddr, hostPort(t))
	daemon(t, dir, "prometheus-pushgateway", "--web.listen-address="+pgwAddr,
		"--persistence.file="+filepath.Join(dir, "pushgateway.data"))
	waitHTTP(t, "http://"+pgwAddr+"/-/ready")

	promPort, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	prom := fmt.Sprintf("http://127.0.0.1:%d", promPort)
	daemon(t, dir, prometheus, "--config.file="+kitPrometheusConfig(t, dir, ns, pgwAddr),
		"--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", promPort), "--log.level=warn")
	waitHTTP(t, prom+"/-/ready")

	// A Deployment-style name: the rules take the workload from it. The
	// budget fits the pod's 10 s with the push: grace 5 s + floor 250 ms +
	// push 1 s + allowance 1 s.
	const name, workload = "kitlate-7d9f8b6c5d-x2x4z", "kitlate"
	pod := appPod(name, 10, []string{"--grace=5s", "--stop-timeout=10s", "--metrics-addr=:9090",
		"--push-gateway=http://" + pgwAddr}, []string{"-ignore", "15", "-children", "1", "-children-ignore-term"})
	pod.Namespace = ns
	c := &pod.Spec.Containers[0]
	c.Ports = []corev1.ContainerPort{{Name: "lfinit", ContainerPort: 9090}}
	for _, env := range []struct{ name, field string }{{"POD_NAME", "metadata.name"}, {"POD_NAMESPACE", "metadata.namespace"}} {
		c.Env = append(c.Env, corev1.EnvVar{Name: env.name, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: env.field}}})
	}
	pod = start(t, pod)

	// The lfinit-pods job found the pod through the apiserver and scrapes
	// it, with the labels the rules join on.
	ctx := context.Background()
	ready := `lfinit_phase{job="lfinit-pods",namespace="` + ns + `",pod="` + name + `",phase="ready"}`
	err = poll(ctx, 60*time.Second, "Prometheus to scrape "+ready, func() (bool, error) {
		_, v := promVector(t, prom, ready)
		return len(v) == 1 && v[0] == 1, nil
	})
	if err != nil {
		t.Fatal(err)
	}

	deleted := time.Now()
	term := deleteAndWatch(t, pod).mustTerminated(t)
	if term.ExitCode != 1 || !strings.Contains(term.Message, "outcome=deadline-exceeded") {
		t.Errorf("exit %d, message %q: want lfinit's 1 and deadline-exceeded", term.ExitCode, term.Message)
	}

	var fired promAlert
	err = poll(ctx, 60*time.Second, "LfinitDeadlineExceededOutsideRollout to fire", func() (bool, error) {
		for _, a := range promAlerts(t, prom) {
			if a.Labels["alertname"] == "LfinitDeadlineExceededOutsideRollout" &&
				a.Labels["namespace"] == ns && a.Labels["workload"] == workload && a.State == "firing" {
				fired = a
				return true, nil
			}
		}
		return false, nil
	})
	seen := time.Since(deleted)
	if err != nil {
		t.Fatalf("%v; alerts: %+v", err, promAlerts(t, prom))
	}
	_, pushed := promVector(t, prom, `push_time_seconds{job="lfinit",namespace="`+ns+`",pod="`+name+`"}`)
	if len(pushed) != 1 {
		t.Fatalf("push_time_seconds of the pod: %v, want one", pushed)
	}
	pushAt := time.Unix(0, int64(pushed[0]*1e9))
	t.Logf("after the delete: lfinit's push %s, the alert active (firing, it has no for:) %s, seen firing by the test %s; its value %s",
		pushAt.Sub(deleted).Round(time.Millisecond), fired.ActiveAt.Sub(deleted).Round(time.Millisecond),
		seen.Round(time.Millisecond), fired.Value)

	// Nothing else of the kit alerts on this one stop: the push arrived,
	// the service was not OOM-killed, and the kills were the deadline's.
	for _, a := range promAlerts(t, prom) {
		if a.Labels["alertname"] != "LfinitDeadlineExceededOutsideRollout" {
			t.Errorf("another alert: %+v", a)
		}
	}
}

package kubernetes

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// A rolling restart's setup: how the unchanged server is run and probed.
type rolloutSetup struct {
	name    string
	command []string
	probe   corev1.ProbeHandler
	preStop *corev1.LifecycleHandler
}

// The server closes its listener on TERM at once, as most servers do, and
// takes a second to start.
var serverArgs = []string{"/server", "-listen", ":8080", "-startup", "1s"}

// rolloutSetups: lfinit with a drain delay and no preStop, the same
// server alone, and the server alone behind a preStop sleep.
func rolloutSetups() []rolloutSetup {
	tcp := corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}
	return []rolloutSetup{
		{name: "lfinit-drain-delay", probe: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(9090)}},
			command: append([]string{"/lfinit", "--metrics-addr=:9090", "--ready-tcp=127.0.0.1:8080",
				"--drain-delay=5s", "--grace=20s", "--stop-timeout=30s", "--"}, serverArgs...)},
		{name: "server-alone", probe: tcp, command: serverArgs},
		{name: "server-prestop-sleep", probe: tcp, command: serverArgs,
			preStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}},
	}
}

// TestRolloutThroughAService: a rolling restart of three replicas behind a
// ClusterIP Service (kube-proxy, iptables mode), with a client on the node
// opening a new connection for each of 200 requests a second. lfinit's
// drain delay loses nothing without a preStop hook; the figures of the
// other setups are logged for comparison.
func TestRolloutThroughAService(t *testing.T) {
	var rows []string
	for _, s := range rolloutSetups() {
		t.Run(s.name, func(t *testing.T) {
			total, failed, kinds := rollout(t, s)
			rows = append(rows, fmt.Sprintf("| %s | %d | %d | %v |", s.name, total, failed, kinds))
			if s.name == "lfinit-drain-delay" && failed > 0 {
				t.Errorf("%d of %d requests failed during the rolling restart: %v", failed, total, kinds)
			}
		})
	}
	t.Logf("rolling restart, 3 replicas, 200 requests/s:\n| setup | requests | failed | errors |\n|---|---|---|---|\n%s",
		joinLines(rows))
}

// rollout deploys s, restarts it while the client runs, and counts.
func rollout(t *testing.T, s rolloutSetup) (total, failed int64, kinds map[string]int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := namespace(t)
	deploy, svc := web(s)
	apps := theNode.client.AppsV1().Deployments(ns)
	if _, err := apps.Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created, err := theNode.client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := waitRolledOut(ctx, ns); err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	url := fmt.Sprintf("http://%s:8080/", created.Spec.ClusterIP)
	if err := waitAnswers(ctx, url); err != nil {
		t.Fatalf("%s: %v\n%s", s.name, err, theNode.logTails())
	}
	c := newClient(url)
	defer c.stop()
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`,
		time.Now().Format(time.RFC3339))
	if _, err := apps.Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := waitRolledOut(ctx, ns); err != nil {
		t.Fatalf("%s: %v", s.name, err)
	}
	c.stop()
	total, failed, kinds = c.counts()
	t.Logf("%s: %d requests, %d failed %v", s.name, total, failed, kinds)
	return total, failed, kinds
}

// waitAnswers waits until the Service has answered 100 requests in a row:
// kube-proxy has its rules, and the count starts from a steady state.
func waitAnswers(ctx context.Context, url string) error {
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	row := 0
	return poll(ctx, time.Minute, "the Service to answer", func() (bool, error) {
		for ; row < 100; row++ {
			resp, err := hc.Get(url)
			if err != nil {
				row = 0
				return false, nil
			}
			resp.Body.Close()
		}
		return true, nil
	})
}

// web is a Deployment of three replicas of setup s and its Service.
func web(s rolloutSetup) (*appsv1.Deployment, *corev1.Service) {
	labels := map[string]string{"app": "web"}
	replicas, grace := int32(3), int64(30)
	zero, one := intstr.FromInt32(0), intstr.FromInt32(1)
	c := corev1.Container{Name: "web", Image: appImage, ImagePullPolicy: corev1.PullNever, Command: s.command,
		ReadinessProbe: &corev1.Probe{ProbeHandler: s.probe, PeriodSeconds: 1, FailureThreshold: 1}}
	if s.preStop != nil {
		c.Lifecycle = &corev1.Lifecycle{PreStop: s.preStop}
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &zero, MaxSurge: &one}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: &grace, DNSPolicy: corev1.DNSDefault,
					EnableServiceLinks: new(bool), AutomountServiceAccountToken: new(bool),
					Containers: []corev1.Container{c}},
			},
		},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: labels,
			Ports: []corev1.ServicePort{{Port: 8080, TargetPort: intstr.FromInt32(8080)}}},
	}
	return d, svc
}

// waitRolledOut waits until the Deployment runs its current template on
// every replica and no pod of an older one is left, as
// `kubectl rollout status` and then the old pods' ends would.
func waitRolledOut(ctx context.Context, ns string) error {
	return poll(ctx, 2*time.Minute, "the rollout", func() (bool, error) {
		d, err := theNode.client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		st := d.Status
		if st.ObservedGeneration < d.Generation || st.UpdatedReplicas != 3 || st.AvailableReplicas != 3 || st.Replicas != 3 {
			return false, nil
		}
		pods, err := theNode.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		return err == nil && len(pods.Items) == 3, nil
	})
}

// client sends GETs at a steady rate, each on a new connection (so that
// each is routed by the Service's rules of the moment), and counts.
type client struct {
	url      string
	http     *http.Client
	quit     chan struct{}
	once     sync.Once
	wg       sync.WaitGroup
	ok, fail atomic.Int64
	mu       sync.Mutex
	kinds    map[string]int64
}

func newClient(url string) *client {
	c := &client{url: url, quit: make(chan struct{}), kinds: map[string]int64{},
		http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	c.wg.Add(1)
	go c.run(time.Second / 200)
	return c
}

func (c *client) run(interval time.Duration) {
	defer c.wg.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-c.quit:
			return
		case <-tick.C:
		}
		c.wg.Add(1)
		go func() { defer c.wg.Done(); c.one() }()
	}
}

func (c *client) one() {
	resp, err := c.http.Get(c.url)
	kind := ""
	if err != nil {
		kind = err.Error()
		if i := len(kind) - 40; i > 0 {
			kind = kind[i:] // the error's end names it; its start names the address
		}
	} else {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			kind = resp.Status
		}
	}
	if kind == "" {
		c.ok.Add(1)
		return
	}
	c.fail.Add(1)
	c.mu.Lock()
	c.kinds[kind]++
	c.mu.Unlock()
}

// stop ends the client and waits for its requests in flight.
func (c *client) stop() {
	c.once.Do(func() { close(c.quit) })
	c.wg.Wait()
}

func (c *client) counts() (total, failed int64, kinds map[string]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ok.Load() + c.fail.Load(), c.fail.Load(), c.kinds
}

func joinLines(rows []string) string {
	out := ""
	for _, r := range rows {
		out += r + "\n"
	}
	return out
}

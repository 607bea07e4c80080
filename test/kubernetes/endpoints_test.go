package kubernetes

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestDrainDelayTakesThePodOutOfItsEndpoints: with an httpGet readiness
// probe on lfinit's /readyz and --drain-delay, the EndpointSlice shows
// the endpoint ready=false, serving=false, terminating=true while lfinit
// still quiesces (its metrics say so, the service untouched): the
// endpoint leaves the rotation before the service is asked to stop,
// with no preStop hook.
func TestDrainDelayTakesThePodOutOfItsEndpoints(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pod := appPod("drain", 30, []string{"--metrics-addr=:9090", "--drain-delay=8s", "--grace=15s", "--stop-timeout=30s"},
		[]string{"-listen", ":8080"})
	pod.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(9090)}},
		PeriodSeconds:    1,
		FailureThreshold: 1,
	}
	pod.Namespace = namespace(t)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "drain", Namespace: pod.Namespace},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "drain"},
			Ports: []corev1.ServicePort{{Port: 8080, TargetPort: intstr.FromInt32(8080)}}},
	}
	if _, err := theNode.client.CoreV1().Services(pod.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod = start(t, pod)
	slices := theNode.client.DiscoveryV1().EndpointSlices(pod.Namespace)
	t0 := time.Now()
	if err := theNode.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Polled, not watched: each state lasts seconds, and a list cannot
	// miss one the way a watch that the apiserver ends can.
	last := ""
	err := poll(ctx, time.Minute, "ready=false serving=false terminating=true", func() (bool, error) {
		l, err := slices.List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=drain"})
		if err != nil {
			return false, nil
		}
		for _, s := range l.Items {
			for _, e := range s.Endpoints {
				c := e.Conditions
				state := fmt.Sprintf("%s ready=%v serving=%v terminating=%v", e.Addresses, *c.Ready, *c.Serving, *c.Terminating)
				if state != last {
					t.Logf("%6s after the delete: %s", time.Since(t0).Round(time.Millisecond), state)
					last = state
				}
				if !*c.Ready && !*c.Serving && *c.Terminating {
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if phase := lfinitPhase(t, pod.Status.PodIP); phase != "quiescing" {
		t.Fatalf("out of the endpoints while lfinit was %s, want quiescing", phase)
	}
}

// lfinitPhase is the phase lfinit's metrics at ip:9090 say is current.
func lfinitPhase(t *testing.T, ip string) string {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://%s:9090/metrics", ip))
	if err != nil {
		t.Fatalf("scrape lfinit: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "lfinit_phase{") && strings.HasSuffix(line, " 1") {
			return strings.TrimSuffix(strings.TrimPrefix(line, `lfinit_phase{phase="`), `"} 1`)
		}
	}
	t.Fatalf("no current lfinit_phase in\n%s", body)
	return ""
}

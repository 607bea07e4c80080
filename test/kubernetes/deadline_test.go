package kubernetes

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDeadlineBeforeTheKubeletsKill: a service that ignores TERM, with
// terminationGracePeriodSeconds 10 and lfinit's default budget (8s +
// 250ms, what `lfinit budget --stop-timeout=10s` says fits): lfinit kills
// the tree itself and exits 1, and the kubelet reports 1, never 137,
// with lfinit's reason.
func TestDeadlineBeforeTheKubeletsKill(t *testing.T) {
	pod := start(t, appPod("ignores", 10, []string{"--stop-timeout=10s"}, []string{"-ignore", "15"}))
	term := deleteAndWatch(t, pod).mustTerminated(t)
	if term.ExitCode != 1 {
		t.Errorf("exit code %d, want lfinit's 1 (137 is the kubelet's kill)", term.ExitCode)
	}
	for _, want := range []string{"outcome=deadline-exceeded", "exit_code=1", "cause=deadline", "killed: helper"} {
		if !strings.Contains(term.Message, want) {
			t.Errorf("termination message %q lacks %q", term.Message, want)
		}
	}
	// lfinit's own kill against its own deadline: the hard deadline is
	// 8.25 s after the TERM, and the pod's 10 s are the kubelet's.
	if d := messageDuration(t, term.Message, "shutdown_duration"); d < 8250*time.Millisecond || d >= 10*time.Second {
		t.Errorf("shutdown_duration %s: want from the hard deadline 8.25s to under the pod's 10s", d)
	}
}

// messageDuration is the duration key=value of a termination message.
func messageDuration(t *testing.T, msg, key string) time.Duration {
	t.Helper()
	for _, f := range strings.Fields(msg) {
		if v, ok := strings.CutPrefix(strings.TrimSuffix(f, ";"), key+"="); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("%s=%q: %v", key, v, err)
			}
			return d
		}
	}
	t.Fatalf("termination message %q has no %s", msg, key)
	return 0
}

// TestGraceLongerThanThePodsIsKilledBy137: with a grace longer than the
// pod's, the kubelet's SIGKILL comes first and the pod says 137: what
// --stop-timeout exists to refuse.
func TestGraceLongerThanThePodsIsKilledBy137(t *testing.T) {
	pod := start(t, appPod("too-long", 5, []string{"--grace=15s"}, []string{"-ignore", "15"}))
	term := deleteAndWatch(t, pod).mustTerminated(t)
	if term.ExitCode != 137 {
		t.Errorf("exit code %d, want the kubelet's 137", term.ExitCode)
	}
}

// TestStopTimeoutRefusesABudgetThatDoesNotFit: the same budget with
// --stop-timeout set to the pod's grace period does not start: exit 2,
// and its one-line reason is the kubelet's termination message (from the
// log, with terminationMessagePolicy FallbackToLogsOnError).
func TestStopTimeoutRefusesABudgetThatDoesNotFit(t *testing.T) {
	ctx := context.Background()
	pod := appPod("refused", 5, []string{"--grace=15s", "--stop-timeout=5s"}, []string{"-ignore", "15"})
	pod.Spec.Containers[0].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	pod.Namespace = namespace(t)
	c := theNode.client.CoreV1().Pods(pod.Namespace)
	if _, err := c.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var term *corev1.ContainerStateTerminated
	err := poll(ctx, 60*time.Second, "the container to end", func() (bool, error) {
		p, err := c.Get(ctx, pod.Name, metav1.GetOptions{})
		if err == nil && len(p.Status.ContainerStatuses) > 0 {
			term = p.Status.ContainerStatuses[0].State.Terminated
		}
		return term != nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("terminated: exit %d, message %q", term.ExitCode, term.Message)
	if term.ExitCode != 2 || !strings.Contains(term.Message, "does not fit --stop-timeout 5s") {
		t.Errorf("exit %d, message %q: want 2 and the budget's reason", term.ExitCode, term.Message)
	}
}

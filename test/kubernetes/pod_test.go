package kubernetes

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// appPod is a pod of one container running the app image: lfinit with
// args, then "--" and the helper with helperArgs.
func appPod(name string, grace int64, args, helperArgs []string) *corev1.Pod {
	cmd := append(append([]string{}, args...), "--", "/helper")
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &grace,
			RestartPolicy:                 corev1.RestartPolicyNever,
			DNSPolicy:                     corev1.DNSDefault,
			EnableServiceLinks:            new(bool),
			AutomountServiceAccountToken:  new(bool),
			Containers: []corev1.Container{{
				Name: "app", Image: appImage, ImagePullPolicy: corev1.PullNever,
				Args: append(cmd, helperArgs...),
			}},
		},
	}
}

// start creates pod (in a namespace of the test's own unless it names
// one) and waits until its
// container runs (and, with a readiness probe, is ready).
func start(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	if pod.Namespace == "" {
		pod.Namespace = namespace(t)
	}
	c := theNode.client.CoreV1().Pods(pod.Namespace)
	if _, err := c.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	var got *corev1.Pod
	err := poll(ctx, 60*time.Second, "pod "+pod.Name+" to be ready", func() (bool, error) {
		p, err := c.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		got = p
		for _, s := range p.Status.ContainerStatuses {
			if s.State.Terminated != nil {
				return false, fmt.Errorf("container ended at start: %+v", *s.State.Terminated)
			}
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady {
				return cond.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, describePod(got), theNode.logTails())
	}
	return got
}

// describePod is a pod's status and its namespace's events, for a failure.
func describePod(p *corev1.Pod) string {
	if p == nil {
		return "the pod was never read back"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pod %s: phase %s, node %q\n", p.Name, p.Status.Phase, p.Spec.NodeName)
	for _, c := range p.Status.Conditions {
		fmt.Fprintf(&b, "  condition %s=%s %s %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, s := range p.Status.ContainerStatuses {
		fmt.Fprintf(&b, "  container %s: %+v\n", s.Name, s.State)
	}
	evs, _ := theNode.client.CoreV1().Events(p.Namespace).List(context.Background(), metav1.ListOptions{})
	if evs != nil {
		for _, e := range evs.Items {
			fmt.Fprintf(&b, "  event %s %s: %s\n", e.Reason, e.InvolvedObject.Name, e.Message)
		}
	}
	return b.String()
}

// namespace makes a namespace for the test, deleted when it ends.
func namespace(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := theNode.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() { deleteNamespace(t, name) })
	err := poll(ctx, 60*time.Second, "the namespace's service account", func() (bool, error) {
		_, err := theNode.client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// deleteNamespace deletes a test's namespace and waits until its pods
// are gone, so that the next test starts on an idle node.
func deleteNamespace(t *testing.T, name string) {
	ctx := context.Background()
	zero := int64(0)
	pods := theNode.client.CoreV1().Pods(name)
	pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	theNode.client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	err := poll(ctx, 60*time.Second, "the pods of "+name+" to go", func() (bool, error) {
		l, err := pods.List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 0, nil
	})
	if err != nil {
		t.Error(err)
	}
}

// ending is what the kubelet reported of a deleted pod's container.
type ending struct {
	terminated *corev1.ContainerStateTerminated            // the first container's
	byName     map[string]*corev1.ContainerStateTerminated // every container's, init containers too
	gone       time.Duration                               // from the delete until the pod object went
}

// deleteAndWatch deletes pod and follows it until the object is gone,
// keeping the last terminated state the kubelet reported. A watch the
// apiserver ends is started again from the last version seen.
func deleteAndWatch(t *testing.T, pod *corev1.Pod) ending {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := theNode.client.CoreV1().Pods(pod.Namespace)
	rv := pod.ResourceVersion
	end := ending{byName: map[string]*corev1.ContainerStateTerminated{}}
	t0 := time.Time{}
	for ctx.Err() == nil {
		w, err := c.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + pod.Name, ResourceVersion: rv})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		if t0.IsZero() {
			t0 = time.Now()
			if err := c.Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
		}
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				rv = "" // an error, such as a version too old or too new
				continue
			}
			rv = p.ResourceVersion
			for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
				if s.State.Terminated != nil {
					end.byName[s.Name] = s.State.Terminated
				}
			}
			end.terminated = end.byName[pod.Spec.Containers[0].Name]
			if ev.Type == watch.Deleted {
				end.gone = time.Since(t0)
				w.Stop()
				return end
			}
		}
		w.Stop()
	}
	t.Fatalf("pod %s not gone within 2 minutes of its delete", pod.Name)
	return end
}

// terminated is the container's terminated state, or a failure.
func (e ending) mustTerminated(t *testing.T) *corev1.ContainerStateTerminated {
	t.Helper()
	if e.terminated == nil {
		t.Fatal("the kubelet reported no terminated state before the pod went")
	}
	t.Logf("terminated: exit %d, reason %q, message %q; pod gone %s after the delete",
		e.terminated.ExitCode, e.terminated.Reason, e.terminated.Message, e.gone.Round(time.Millisecond))
	return e.terminated
}

// TestDeleteOfAServiceThatStops: the kubelet's TERM reaches the service
// through lfinit, lfinit exits 0 at once, and the kubelet reports lfinit's
// termination message from the /dev/termination-log it mounted. The TERM
// came from outside the pod's PID namespace (containerd's runc), and the
// message says so.
func TestDeleteOfAServiceThatStops(t *testing.T) {
	pod := start(t, appPod("stops", 30, []string{"--grace=20s", "--exit-map=143=0"}, nil))
	term := deleteAndWatch(t, pod).mustTerminated(t)
	if term.ExitCode != 0 {
		t.Errorf("exit code %d, want 0", term.ExitCode)
	}
	for _, want := range []string{"outcome=graceful", "exit_code=0", "signal=SIGTERM sender=outside-pid-namespace "} {
		if !strings.Contains(term.Message, want) {
			t.Errorf("termination message %q lacks %q", term.Message, want)
		}
	}
	if d := term.FinishedAt.Sub(term.StartedAt.Time); d <= 0 {
		t.Errorf("finished %s before started %s", term.FinishedAt, term.StartedAt)
	}
}

package kubernetes

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestNativeSidecarStopsAfterTheMainContainer: lfinit as the init of a
// native sidecar (an init container with restartPolicy Always) and of the
// main container. On a delete the kubelet stops the main container first
// and the sidecar only once it has exited; each lfinit drains for 2 s,
// so the sidecar ends seconds after the main container, and both report
// lfinit's graceful stop with exit 0.
func TestNativeSidecarStopsAfterTheMainContainer(t *testing.T) {
	args := []string{"/lfinit", "--drain-delay=2s", "--grace=8s", "--exit-map=143=0", "--", "/helper"}
	always := corev1.ContainerRestartPolicyAlways
	pod := appPod("sidecar", 30, nil, nil)
	pod.Spec.Containers[0].Args = nil
	pod.Spec.Containers[0].Command = args
	pod.Spec.InitContainers = []corev1.Container{{
		Name: "sidecar", Image: appImage, ImagePullPolicy: corev1.PullNever,
		Command: args, RestartPolicy: &always,
	}}
	end := deleteAndWatch(t, start(t, pod))
	main := end.mustTerminated(t)
	side := end.byName["sidecar"]
	if side == nil {
		t.Fatal("the kubelet reported no terminated state for the sidecar")
	}
	t.Logf("sidecar: exit %d, message %q, finished %s; main finished %s",
		side.ExitCode, side.Message, side.FinishedAt.UTC(), main.FinishedAt.UTC())
	for name, term := range map[string]*corev1.ContainerStateTerminated{"main": main, "sidecar": side} {
		if term.ExitCode != 0 || !strings.Contains(term.Message, "outcome=graceful") {
			t.Errorf("%s: exit %d, message %q; want 0 and lfinit's graceful stop", name, term.ExitCode, term.Message)
		}
	}
	// Pod times have a resolution of one second; the sidecar's stop
	// starts when the main container's 2 s drain has ended.
	if !side.FinishedAt.After(main.FinishedAt.Time) {
		t.Errorf("the sidecar finished at %s, not after the main container (%s)", side.FinishedAt, main.FinishedAt)
	}
}

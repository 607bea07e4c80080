package container

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// exampleImage is the runtime stage of Dockerfile.example, built locally.
const exampleImage = "localhost/legacy-server-lfinit:example"

// exampleStage turns the last stage of Dockerfile.example into a
// Containerfile podman can build without a registry: each COPY --from
// takes the same file from the build context instead, lfinit and the
// helper standing in for the legacy server. It returns the Containerfile
// and the context's files (context name → binary in binDir).
func exampleStage(text string) (string, map[string]string, error) {
	lines := strings.Split(text, "\n")
	last := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(l)), "FROM ") {
			last = i
		}
	}
	if last < 0 {
		return "", nil, fmt.Errorf("no FROM line")
	}
	if f := strings.Fields(lines[last]); len(f) < 2 || f[1] != "scratch" {
		return "", nil, fmt.Errorf("the runtime stage is %q; the test expects FROM scratch", lines[last])
	}
	// What each stage's file is, here.
	stand := map[string]string{"/out/lfinit": "lfinit", "/app/legacy-server": "helper"}
	files := map[string]string{}
	var out []string
	for _, l := range lines[last:] {
		f := strings.Fields(l)
		if len(f) == 4 && f[0] == "COPY" && strings.HasPrefix(f[1], "--from=") {
			bin, ok := stand[f[2]]
			if !ok {
				return "", nil, fmt.Errorf("the test has no stand-in for %q (%s)", f[2], l)
			}
			name := "ctx-" + filepath.Base(f[2])
			files[name] = bin
			l = "COPY " + name + " " + f[3]
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n"), files, nil
}

var (
	exampleOnce sync.Once
	exampleErr  error
)

// buildExample builds exampleImage once for the tests that need it.
func buildExample(t *testing.T) {
	t.Helper()
	needPodman(t)
	exampleOnce.Do(func() {
		text, err := os.ReadFile(filepath.Join(repo, "Dockerfile.example"))
		if err != nil {
			exampleErr = err
			return
		}
		cf, files, err := exampleStage(string(text))
		if err != nil {
			exampleErr = fmt.Errorf("Dockerfile.example: %v", err)
			return
		}
		dir, err := os.MkdirTemp(filepath.Dir(binDir), "example-")
		if err != nil {
			exampleErr = err
			return
		}
		exampleErr = buildImage(dir, exampleImage, cf, files)
	})
	if exampleErr != nil {
		t.Fatal(exampleErr)
	}
}

var recommendedRE = regexp.MustCompile(`terminationGracePeriodSeconds: (\d+)`)

// TestDockerfileExample runs the runtime stage of Dockerfile.example as a
// user would: the budget from lfinit budget in the image, then the image's
// own ENTRYPOINT and CMD, readiness through the exec probe, and a stop with
// the recommended timeout that drains and exits 0.
func TestDockerfileExample(t *testing.T) {
	buildExample(t)
	cfg := podman(t, "image", "inspect", "--format", "{{json .Config.Entrypoint}} {{json .Config.Cmd}}", exampleImage)
	if cfg != `["/lfinit","--"] ["/app/legacy-server","--listen=:8080"]` {
		t.Errorf("image entrypoint and cmd: %s", cfg)
	}

	// The recipe in the Dockerfile's comment: the image's own ENV, no flags.
	budget, err := podmanCmd(time.Minute, "run", "--rm", "--network", "none", "--entrypoint", "/lfinit", exampleImage, "budget")
	if err != nil {
		t.Fatalf("lfinit budget in the image: %v\n%s", err, budget)
	}
	m := recommendedRE.FindStringSubmatch(budget)
	if m == nil {
		t.Fatalf("lfinit budget recommends nothing:\n%s", budget)
	}
	stopTimeout, _ := strconv.Atoi(m[1])
	drain := envDuration(t, exampleImage, "LFINIT_DRAIN_DELAY")

	c := run(t, exampleImage, nil) // no command: ENTRYPOINT and CMD as built
	waitProbeReady(t, c.name)
	if out := podman(t, "exec", c.name, "/lfinit", "status"); !strings.Contains(out, "ready") {
		t.Errorf("lfinit status:\n%s", out)
	}
	took := c.stop(stopTimeout)
	l := checkExit(t, c, "graceful", 0)
	shutdown := l.dur(t, "shutdown_duration")
	t.Logf("timing: Dockerfile.example, podman stop -t %d: %v, lfinit shutdown %v (drain delay %v), exit 0",
		stopTimeout, took, shutdown, drain)
	between(t, "shutdown_duration", shutdown, drain, drain+time.Second)
	lines := c.lfinitLog()
	if _, ok := find(lines, "child is ready"); !ok {
		t.Errorf("lfinit never logged the child ready (LFINIT_READY_TCP)")
	}
	if _, ok := find(lines, "phase", "phase", "quiescing"); !ok {
		t.Errorf("no quiescing phase: LFINIT_DRAIN_DELAY was not applied")
	}
}

// envDuration reads a duration from an image's ENV.
func envDuration(t *testing.T, image, name string) time.Duration {
	t.Helper()
	out := podman(t, "image", "inspect", "--format", "{{range .Config.Env}}{{println .}}{{end}}", image)
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, name+"="); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("%s=%q: %v", name, v, err)
			}
			return d
		}
	}
	t.Fatalf("image %s has no %s", image, name)
	return 0
}

// waitProbeReady waits until lfinit probe ready, run in the container
// (with its environment, so its LFINIT_STATUS_FILE), exits 0: the exec
// form of the readiness probe.
func waitProbeReady(t *testing.T, name string) {
	t.Helper()
	var out string
	var err error
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, err = podmanCmd(time.Minute, "exec", name, "/lfinit", "probe", "ready")
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("lfinit probe ready in %s never succeeded: %v\n%s", name, err, out)
		}
	}
}

const manifestImage = "registry.example.com/legacy-server-lfinit:1.0"

var (
	tgpsRE = regexp.MustCompile(`(?m)^\s*terminationGracePeriodSeconds:\s*(\d+)\s*$`)
	envRE  = regexp.MustCompile(`(?m)^\s*- name: (LFINIT_\w+)\n\s*value: "?([^"\n]*)"?\s*$`)
)

// podSpec is the pod spec of a manifest: the lines under the "spec:" at
// indent (the Pod's, or the Deployment's template's), dedented, comments
// and blank lines left out, up to the end of the YAML document.
func podSpec(text string, indent int) ([]string, error) {
	pad := strings.Repeat(" ", indent)
	var spec []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		if l == "---" {
			if in {
				break
			}
			continue
		}
		if !in {
			in = l == pad+"spec:"
			continue
		}
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if !strings.HasPrefix(l, pad+"  ") {
			break // back at the spec's own level or above
		}
		spec = append(spec, l[indent:])
	}
	if len(spec) == 0 {
		return nil, fmt.Errorf("no pod spec at indent %d", indent)
	}
	return spec, nil
}

// withoutPorts drops the containers' ports: lists. podman kube play turns
// each containerPort into a published port, which needs a network, and
// this pod runs with none, so that nothing leaves the machine's loopback;
// the probes are exec'd instead.
func withoutPorts(text string) string {
	var out []string
	skipIndent := -1
	for _, l := range strings.Split(text, "\n") {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if skipIndent >= 0 {
			if strings.TrimSpace(l) == "" || indent > skipIndent || (indent == skipIndent && strings.HasPrefix(strings.TrimSpace(l), "- ")) {
				continue
			}
			skipIndent = -1
		}
		if strings.TrimSpace(l) == "ports:" {
			skipIndent = indent
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// TestKubernetesPod checks deploy/kubernetes: the Pod form has the
// Deployment's pod spec, its terminationGracePeriodSeconds fits lfinit
// budget for its env, and it runs for real with podman kube play: ready
// through the exec probe, stopped with podman pod stop -t N
// (terminationGracePeriodSeconds, which podman 4.3 ignores), exit 0 after
// the drain delay, removed with podman kube down.
func TestKubernetesPod(t *testing.T) {
	dir := filepath.Join(repo, "deploy", "kubernetes")
	podText, err := os.ReadFile(filepath.Join(dir, "pod.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	depText, err := os.ReadFile(filepath.Join(dir, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	podSpecLines, err := podSpec(string(podText), 0)
	if err != nil {
		t.Fatalf("pod.yaml: %v", err)
	}
	depSpecLines, err := podSpec(string(depText), 4)
	if err != nil {
		t.Fatalf("deployment.yaml: %v", err)
	}
	if a, b := strings.Join(podSpecLines, "\n"), strings.Join(depSpecLines, "\n"); a != b {
		t.Errorf("pod.yaml's spec differs from deployment.yaml's pod template:\n--- pod.yaml\n%s\n--- deployment.yaml\n%s", a, b)
	}

	m := tgpsRE.FindStringSubmatch(string(podText))
	if m == nil {
		t.Fatal("pod.yaml has no terminationGracePeriodSeconds")
	}
	tgps, _ := strconv.Atoi(m[1])
	env := map[string]string{}
	for _, e := range envRE.FindAllStringSubmatch(string(podText), -1) {
		env[e[1]] = e[2]
	}
	if env["LFINIT_STOP_TIMEOUT"] != strconv.Itoa(tgps)+"s" {
		t.Errorf("LFINIT_STOP_TIMEOUT=%q, want terminationGracePeriodSeconds (%ds)", env["LFINIT_STOP_TIMEOUT"], tgps)
	}
	// lfinit budget with the manifest's variables, as the comment says.
	needPodman(t)
	budget := exec.Command(filepath.Join(binDir, "lfinit"), "budget", "--stop-timeout", strconv.Itoa(tgps)+"s")
	budget.Env = []string{}
	for k, v := range env {
		budget.Env = append(budget.Env, k+"="+v)
	}
	if out, err := budget.CombinedOutput(); err != nil || !strings.Contains(string(out), "fits") {
		t.Errorf("lfinit budget for the manifest's env and terminationGracePeriodSeconds %d: %v\n%s", tgps, err, out)
	}
	drain, err := time.ParseDuration(env["LFINIT_DRAIN_DELAY"])
	if err != nil {
		t.Fatalf("LFINIT_DRAIN_DELAY: %v", err)
	}

	buildExample(t)
	if !strings.Contains(string(podText), "image: "+manifestImage) {
		t.Fatalf("pod.yaml does not use %s", manifestImage)
	}
	local := filepath.Join(t.TempDir(), "pod.yaml")
	played := withoutPorts(strings.ReplaceAll(string(podText), manifestImage, exampleImage))
	// podman 4.3's downward API knows metadata.name but not metadata.namespace.
	played = strings.ReplaceAll(played, "fieldPath: metadata.namespace", "fieldPath: metadata.name")
	if err := os.WriteFile(local, []byte(played), 0o644); err != nil {
		t.Fatal(err)
	}
	const pod, ctrName = "legacy-server", "legacy-server-server"
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := podmanCmd(30*time.Second, "logs", ctrName)
			t.Logf("podman logs %s:\n%s", ctrName, out)
		}
		podmanCmd(time.Minute, "kube", "down", local)
		podmanCmd(time.Minute, "pod", "rm", "--force", "--time", "0", pod)
	})
	// No network: nothing leaves the pod, and the probes are exec'd.
	podman(t, "kube", "play", "--network", "none", local)
	waitProbeReady(t, ctrName)
	if st := podman(t, "exec", ctrName, "/lfinit", "status", "--json"); !strings.Contains(st, `"phase": "ready"`) {
		t.Errorf("lfinit status --json:\n%s", st)
	}
	// The restricted securityContext holds where podman honours it: a
	// non-root user with no capabilities, and still ready (the status file
	// on the emptyDir is writable through fsGroup).
	sec := podman(t, "inspect", "--format", "{{.Config.User}} caps={{.EffectiveCaps}} ro={{.HostConfig.ReadonlyRootfs}} {{.HostConfig.SecurityOpt}}", ctrName)
	t.Logf("securityContext as podman applied it: %s", sec)
	if !strings.HasPrefix(sec, "65532") || !strings.Contains(sec, "caps=[]") || !strings.Contains(sec, "ro=true") {
		t.Errorf("podman inspect: %s, want user 65532, no capabilities, a read-only root", sec)
	}

	begun := time.Now()
	podman(t, "pod", "stop", "--time", strconv.Itoa(tgps), pod)
	took := stopped{exited: finishedAt(t, ctrName).Sub(begun), returned: time.Since(begun)}
	out := podman(t, "inspect", "--format", "{{.State.ExitCode}}", ctrName)
	if out != "0" {
		t.Errorf("container exit code %s, want 0", out)
	}
	l, ok := find(parseLog(podman(t, "logs", ctrName)), "exit")
	if !ok {
		t.Fatalf("no exit line in lfinit's log")
	}
	if l.str("outcome") != "graceful" {
		t.Errorf("outcome %s, want graceful", l.str("outcome"))
	}
	shutdown := l.dur(t, "shutdown_duration")
	t.Logf("timing: pod.yaml, podman pod stop -t %d: %v, lfinit shutdown %v (drain delay %v), exit 0", tgps, took, shutdown, drain)
	between(t, "shutdown_duration", shutdown, drain, drain+time.Second)

	podman(t, "kube", "down", local)
	if out, err := podmanCmd(time.Minute, "pod", "exists", pod); err == nil {
		t.Errorf("pod %s still exists after kube down: %s", pod, out)
	}
}

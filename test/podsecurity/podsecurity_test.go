// Package podsecurity checks offline that deploy/kubernetes passes the
// "restricted" Pod Security Standard, with the evaluator the Kubernetes
// API server's PodSecurity admission uses (k8s.io/pod-security-admission).
// It is its own Go module so that lfinit's module stays free of the
// Kubernetes libraries; scripts/test runs it (cd here, go test).
package podsecurity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

const manifests = "../../deploy/kubernetes"

// documents splits every YAML file of the manifests into its documents.
func documents(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(manifests, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", manifests, err)
	}
	docs := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range strings.Split("\n"+string(b), "\n---") {
			var head struct{ Kind string }
			if err := yaml.Unmarshal([]byte(d), &head); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			if head.Kind != "" {
				docs[filepath.Base(f)+"/"+head.Kind] = []byte(d)
			}
		}
	}
	return docs
}

// podSpecs are the pod specs of the manifests, parsed strictly: a
// misspelt field (securityContext: {runAsNonroot: true}) is an error here,
// not a setting the API server would silently drop.
func podSpecs(t *testing.T) map[string]corev1.PodTemplateSpec {
	t.Helper()
	specs := map[string]corev1.PodTemplateSpec{}
	for name, d := range documents(t) {
		switch {
		case strings.HasSuffix(name, "/Pod"):
			var p corev1.Pod
			if err := yaml.UnmarshalStrict(d, &p); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			specs[name] = corev1.PodTemplateSpec{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
		case strings.HasSuffix(name, "/Deployment"):
			var dep appsv1.Deployment
			if err := yaml.UnmarshalStrict(d, &dep); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			specs[name] = dep.Spec.Template
		}
	}
	if len(specs) < 2 {
		t.Fatalf("want the Pod and the Deployment, found %v", specs)
	}
	return specs
}

func restricted(t *testing.T, pod *corev1.PodTemplateSpec) []policy.CheckResult {
	t.Helper()
	ev, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lv := api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}
	var denied []policy.CheckResult
	for _, r := range ev.EvaluatePod(lv, &pod.ObjectMeta, &pod.Spec) {
		if !r.Allowed {
			denied = append(denied, r)
		}
	}
	return denied
}

func TestManifestsAreRestricted(t *testing.T) {
	for name, pod := range podSpecs(t) {
		spec := pod.Spec
		for _, r := range restricted(t, &pod) {
			t.Errorf("%s violates the restricted Pod Security Standard: %s: %s", name, r.ForbiddenReason, r.ForbiddenDetail)
		}
		c := spec.Containers[0]
		if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
			t.Errorf("%s: the root filesystem is not read-only", name)
		}
		if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero() {
			t.Errorf("%s: no memory request and limit or CPU request", name)
		}
		statusDir := ""
		for _, e := range c.Env {
			if e.Name == "LFINIT_STATUS_FILE" {
				statusDir = filepath.Dir(e.Value)
			}
		}
		if !mountedEmptyDir(spec, c, statusDir) {
			t.Errorf("%s: the status file's directory %q is not an emptyDir mount (the root is read-only)", name, statusDir)
		}
	}
}

// mountedEmptyDir reports whether dir is where c mounts an emptyDir volume.
func mountedEmptyDir(spec corev1.PodSpec, c corev1.Container, dir string) bool {
	for _, m := range c.VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.EmptyDir != nil {
				return true
			}
		}
	}
	return false
}

// TestEvaluatorCatchesViolations proves the check can fail: each
// weakening of the manifest's pod is denied.
func TestEvaluatorCatchesViolations(t *testing.T) {
	pod := podSpecs(t)["pod.yaml/Pod"]
	yes, root := true, int64(0)
	for what, weaken := range map[string]func(s *corev1.PodSpec){
		"privilege escalation": func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.AllowPrivilegeEscalation = &yes },
		"capabilities kept":    func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.Capabilities = nil },
		"run as root":          func(s *corev1.PodSpec) { s.SecurityContext.RunAsUser = &root },
		"no seccomp profile":   func(s *corev1.PodSpec) { s.SecurityContext.SeccompProfile = nil },
		"hostPath volume": func(s *corev1.PodSpec) {
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		},
	} {
		p := *pod.DeepCopy()
		weaken(&p.Spec)
		if len(restricted(t, &p)) == 0 {
			t.Errorf("%s: allowed by the restricted level", what)
		}
	}
}

// TestMonitoringManifests checks that the NetworkPolicy and the PodMonitor
// select the Deployment's pods and name ports its container has.
func TestMonitoringManifests(t *testing.T) {
	docs := documents(t)
	spec := podSpecs(t)["deployment.yaml/Deployment"].Spec
	var dep appsv1.Deployment
	yaml.Unmarshal(docs["deployment.yaml/Deployment"], &dep)
	labels := dep.Spec.Template.Labels
	ports := map[string]bool{}
	for _, p := range spec.Containers[0].Ports {
		ports[p.Name] = true
	}

	var np networkingv1.NetworkPolicy
	if err := yaml.UnmarshalStrict(docs["monitoring.yaml/NetworkPolicy"], &np); err != nil {
		t.Fatalf("NetworkPolicy: %v", err)
	}
	for k, v := range np.Spec.PodSelector.MatchLabels {
		if labels[k] != v {
			t.Errorf("NetworkPolicy selects %s=%s, the pods have %v", k, v, labels)
		}
	}
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			if p.Port == nil || !ports[p.Port.StrVal] {
				t.Errorf("NetworkPolicy port %v is not a port of the container (%v)", p.Port, ports)
			}
			if p.Port != nil && p.Port.StrVal == "lfinit" && len(rule.From) == 0 {
				t.Error("the NetworkPolicy opens lfinit's port to everyone")
			}
		}
	}

	var pm struct {
		APIVersion string `json:"apiVersion"`
		Spec       struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			Endpoints []struct {
				Port string `json:"port"`
				Path string `json:"path"`
			} `json:"podMetricsEndpoints"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(docs["monitoring.yaml/PodMonitor"], &pm); err != nil || pm.APIVersion != "monitoring.coreos.com/v1" {
		t.Fatalf("PodMonitor: %v %q", err, pm.APIVersion)
	}
	for k, v := range pm.Spec.Selector.MatchLabels {
		if labels[k] != v {
			t.Errorf("PodMonitor selects %s=%s, the pods have %v", k, v, labels)
		}
	}
	if len(pm.Spec.Endpoints) != 1 || !ports[pm.Spec.Endpoints[0].Port] || pm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("PodMonitor endpoints %+v", pm.Spec.Endpoints)
	}
	// One scrape only: annotations beside the PodMonitor would make a
	// Prometheus that scrapes annotated pods scrape these a second time.
	for name, pod := range podSpecs(t) {
		for k := range pod.Annotations {
			if strings.HasPrefix(k, "prometheus.io/") {
				t.Errorf("%s has the annotation %s beside the PodMonitor: pods scraped twice", name, k)
			}
		}
	}
}

// kitLabel is the label every object of the operator kit carries, for the
// operator's podMonitorSelector, serviceMonitorSelector and ruleSelector
// (deploy/README.md documents it).
const kitLabel = "lfinit.light-fabric.io/monitoring"

// TestOperatorKit checks the Prometheus operator's objects: each carries
// the documented selector label, the Pushgateway is scraped with
// honorLabels (or the pushed job and pod labels become exported_*), and
// the PrometheusRule has the kit's rule groups.
func TestOperatorKit(t *testing.T) {
	docs := documents(t)
	for _, name := range []string{"monitoring.yaml/PodMonitor", "pushgateway.yaml/ServiceMonitor", "prometheusrule.yaml/PrometheusRule"} {
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Metadata   struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(docs[name], &obj); err != nil || obj.APIVersion != "monitoring.coreos.com/v1" {
			t.Errorf("%s: %v %q", name, err, obj.APIVersion)
		}
		if obj.Metadata.Labels[kitLabel] != "true" {
			t.Errorf("%s: no label %s: \"true\" for the operator's selectors (labels %v)", name, kitLabel, obj.Metadata.Labels)
		}
	}
	var sm struct {
		Spec struct {
			Selector  struct{ MatchLabels map[string]string } `json:"selector"`
			Endpoints []struct {
				Port        string `json:"port"`
				HonorLabels bool   `json:"honorLabels"`
			} `json:"endpoints"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(docs["pushgateway.yaml/ServiceMonitor"], &sm); err != nil {
		t.Fatalf("ServiceMonitor: %v", err)
	}
	if len(sm.Spec.Endpoints) != 1 || !sm.Spec.Endpoints[0].HonorLabels || len(sm.Spec.Selector.MatchLabels) == 0 {
		t.Errorf("the Pushgateway's ServiceMonitor: %+v, want one endpoint with honorLabels: true and a selector", sm.Spec)
	}
	var pr struct {
		Spec struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []struct {
					Record string `json:"record"`
					Alert  string `json:"alert"`
					Expr   string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(docs["prometheusrule.yaml/PrometheusRule"], &pr); err != nil {
		t.Fatalf("PrometheusRule: %v", err)
	}
	alerts := 0
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			if r.Expr == "" || (r.Record == "") == (r.Alert == "") {
				t.Errorf("PrometheusRule group %s: rule %+v", g.Name, r)
			}
			if r.Alert != "" {
				alerts++
			}
		}
	}
	if alerts == 0 {
		t.Error("the PrometheusRule has no alerts")
	}
}

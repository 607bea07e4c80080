package kubernetes

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// operatorCRDs are the CRDs of the Prometheus operator that the kit's
// objects need, as ./crds generates them.
var operatorCRDs = []string{"podmonitors", "servicemonitors", "prometheusrules"}

// kitResources are the resources of the kinds in the kit's files.
var kitResources = map[string]schema.GroupVersionResource{
	"NetworkPolicy":  {Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
	"PodMonitor":     {Group: "monitoring.coreos.com", Version: "v1", Resource: "podmonitors"},
	"ServiceMonitor": {Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"},
	"PrometheusRule": {Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"},
}

// strict is server-side validation that refuses a field the schema does
// not know (or a duplicate one), where the default only warns and prunes.
var strict = metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}

// restConfig is the admin's client configuration of the node.
func restConfig(t *testing.T) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", theNode.path("admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// installOperatorCRDs creates the operator's CRDs (./crds generates them
// from the operator's API types) and waits until they are established;
// they are deleted when the test ends.
func installOperatorCRDs(t *testing.T, cfg *rest.Config) {
	t.Helper()
	ctx := context.Background()
	out, err := exec.Command("./crds").Output()
	if err != nil {
		t.Fatalf("./crds: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	c := apiextensions.NewForConfigOrDie(cfg).ApiextensionsV1().CustomResourceDefinitions()
	for _, name := range operatorCRDs {
		b, err := os.ReadFile(filepath.Join(dir, "monitoring.coreos.com_"+name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(b, &crd); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := c.Create(ctx, &crd, strict); err != nil {
			t.Fatalf("create the CRD %s: %v", crd.Name, err)
		}
		t.Cleanup(func() {
			c.Delete(ctx, crd.Name, metav1.DeleteOptions{})
			err := poll(ctx, 60*time.Second, "the CRD "+crd.Name+" to go", func() (bool, error) {
				_, err := c.Get(ctx, crd.Name, metav1.GetOptions{})
				return apierrors.IsNotFound(err), nil
			})
			if err != nil {
				t.Error(err)
			}
		})
		err = poll(ctx, 30*time.Second, "the CRD "+crd.Name+" to be established", func() (bool, error) {
			got, err := c.Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established {
					return cond.Status == apiextensionsv1.ConditionTrue, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// kitObjects are the objects of a file of deploy/kubernetes.
func kitObjects(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(filepath.Join("../../deploy/kubernetes", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if m != nil {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

// TestOperatorObjectsApply: the objects of the kit for the Prometheus
// operator (the PodMonitor and NetworkPolicy of monitoring.yaml, the
// ServiceMonitor of pushgateway.yaml, the PrometheusRule) are accepted by
// the apiserver against the schemas of the operator's CRDs, with strict
// field validation; the same validation refuses a field the PodMonitor's
// schema does not know, so the schema is what accepted them.
func TestOperatorObjectsApply(t *testing.T) {
	ctx := context.Background()
	cfg := restConfig(t)
	installOperatorCRDs(t, cfg)
	ns := namespace(t)
	dyn := dynamic.NewForConfigOrDie(cfg)
	kinds := map[string]int{}
	var podMonitor *unstructured.Unstructured
	for _, file := range []string{"monitoring.yaml", "pushgateway.yaml", "prometheusrule.yaml"} {
		for _, obj := range kitObjects(t, file) {
			gvr, ok := kitResources[obj.GetKind()]
			if !ok {
				t.Fatalf("%s: a %s, which the test does not know", file, obj.GetKind())
			}
			obj.SetNamespace(ns) // as kubectl apply -n does; the kit's objects go where the user puts them
			if _, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, obj, strict); err != nil {
				t.Errorf("%s: the %s %s is refused: %v", file, obj.GetKind(), obj.GetName(), err)
				continue
			}
			t.Logf("%s: the %s %s is accepted", file, obj.GetKind(), obj.GetName())
			kinds[obj.GetKind()]++
			if obj.GetKind() == "PodMonitor" {
				podMonitor = obj
			}
		}
	}
	for _, kind := range []string{"PodMonitor", "ServiceMonitor", "PrometheusRule"} {
		if kinds[kind] == 0 {
			t.Errorf("the kit has no %s accepted", kind)
		}
	}
	if podMonitor == nil {
		return
	}

	// A misspelt field: the schema knows none of it, and strict
	// validation refuses it.
	bad := podMonitor.DeepCopy()
	bad.SetName("misspelt")
	bad.SetResourceVersion("")
	eps, _, _ := unstructured.NestedSlice(bad.Object, "spec", "podMetricsEndpoints")
	eps[0].(map[string]any)["scrapeIntervall"] = "15s"
	unstructured.SetNestedSlice(bad.Object, eps, "spec", "podMetricsEndpoints")
	_, err := dyn.Resource(kitResources["PodMonitor"]).Namespace(ns).Create(ctx, bad, strict)
	if err == nil || !strings.Contains(err.Error(), `unknown field "spec.podMetricsEndpoints[0].scrapeIntervall"`) {
		t.Errorf("a PodMonitor with an unknown field: %v, want it refused as an unknown field", err)
	} else {
		t.Logf("an unknown field is refused: %v", err)
	}
}

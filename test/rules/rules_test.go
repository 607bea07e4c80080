// Package rules checks the operator kit of deploy/ without a cluster:
// promtool check rules and promtool test rules on the Prometheus rules
// (the plain file and the PrometheusRule object, which must hold the same
// groups), promtool check config on the static scrape configuration, and
// the Grafana dashboard's structure (test/monitoring runs its queries
// against a real Prometheus).
//
// promtool is Debian's (package prometheus; scripts/install-qualification-deps
// installs it). Without it the promtool tests skip, but only when not root:
// as root the install script provides it, so its absence is a failure.
package rules

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	rulesFile      = "../../deploy/prometheus/lfinit.rules.yml"
	prometheusRule = "../../deploy/kubernetes/prometheusrule.yaml"
	scrapeConfig   = "../../deploy/prometheus/prometheus.yml"
	unitTests      = "testdata/lfinit.rules.test.yml"
)

// promtool runs promtool with args in dir and fails the test on an error.
func promtool(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("promtool"); err != nil {
		if os.Geteuid() != 0 {
			t.Skipf("promtool is not installed and this is not root: run scripts/install-qualification-deps as root (Debian package prometheus): %v", err)
		}
		t.Fatalf("promtool is not installed, though scripts/install-deps installs it as root: %v", err)
	}
	cmd := exec.Command("promtool", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// ruleGroups is the rules file from its groups: key on, without the
// header comment.
func ruleGroups(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), "\ngroups:\n")
	if i < 0 {
		t.Fatalf("%s has no groups: key at the start of a line", rulesFile)
	}
	return string(b[i+1:])
}

// specGroups is the PrometheusRule's spec, dedented by its two spaces:
// a rules file, if the object is right.
func specGroups(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(prometheusRule)
	if err != nil {
		t.Fatal(err)
	}
	_, spec, ok := strings.Cut(string(b), "\nspec:\n")
	if !ok {
		t.Fatalf("%s has no spec:", prometheusRule)
	}
	var out []string
	for _, l := range strings.SplitAfter(spec, "\n") {
		if l != "" && l != "\n" && !strings.HasPrefix(l, "  ") {
			t.Fatalf("%s: a line of spec is not indented: %q", prometheusRule, l)
		}
		out = append(out, strings.TrimPrefix(l, "  "))
	}
	return strings.Join(out, "")
}

// TestPrometheusRuleIsTheRulesFile keeps the two forms of the rules equal.
func TestPrometheusRuleIsTheRulesFile(t *testing.T) {
	if a, b := ruleGroups(t), specGroups(t); a != b {
		t.Errorf("the PrometheusRule's spec is not %s's groups; regenerate it:\n"+
			"  sed -n '/^groups:/,$p' %s | sed 's/^\\(.\\)/  \\1/'", rulesFile, rulesFile)
	}
}

// TestCheckRules: both forms load in Prometheus (syntax, PromQL, templates).
func TestCheckRules(t *testing.T) {
	out := promtool(t, ".", "check", "rules", rulesFile)
	t.Log(out)
	spec := filepath.Join(t.TempDir(), "prometheusrule-spec.yml")
	if err := os.WriteFile(spec, []byte(specGroups(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	promtool(t, ".", "check", "rules", spec)
}

// TestRulesUnit runs the rules on input series and compares the alerts and
// recorded series (testdata/lfinit.rules.test.yml): one deadline during a
// rollout records and does not alert; a lone one alerts until its push
// leaves the freshness window, while the group itself stays; repeated
// deadlines, a crash with no stop asked, leftovers killed, processes no
// signal reached, a pod gone without a push, one never ready, dropped log
// lines and failed status writes each alert.
func TestRulesUnit(t *testing.T) {
	t.Log(promtool(t, filepath.Dir(unitTests), "test", "rules", filepath.Base(unitTests)))
}

// TestScrapeConfig: the static scrape configuration, with its rule file.
func TestScrapeConfig(t *testing.T) {
	out := promtool(t, filepath.Dir(scrapeConfig), "check", "config", filepath.Base(scrapeConfig))
	if !strings.Contains(out, "1 rule files found") {
		t.Errorf("prometheus.yml does not load the rules:\n%s", out)
	}
	b, err := os.ReadFile(scrapeConfig)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "honor_labels: true") {
		t.Error("the Pushgateway job has no honor_labels: true")
	}
}

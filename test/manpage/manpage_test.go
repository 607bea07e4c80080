// Package manpage checks man/lfinit.1: mandoc -Tlint finds no warning or
// error, man -l renders it with nothing on stderr, and it documents every
// option and variable of lfinit --help, every status file key, phase and
// outcome.
package manpage

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/light-fabric/lfinit/statusfile"
)

const page = "../../man/lfinit.1"

const install = "; install it with scripts/install-qualification-deps (apt-get install mandoc man-db), as CI does"

// TestLint: mandoc -Tlint exits 1 for style, 2 for warnings, 3 and up for
// errors; warnings and errors fail, style notes are only shown.
func TestLint(t *testing.T) {
	if _, err := exec.LookPath("mandoc"); err != nil {
		t.Skip("mandoc is not installed" + install)
	}
	out, err := exec.Command("mandoc", "-Tlint", "-W", "style", page).CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		t.Logf("mandoc style notes:\n%s", out)
	default:
		t.Errorf("mandoc -Tlint %s: %v\n%s", page, err, out)
	}
}

// TestRender: man -l renders the page with an empty stderr. man --warnings
// exits 0 even when groff warns, so stderr is what is checked.
func TestRender(t *testing.T) {
	if testing.Short() {
		t.Skip("renders with man and groff, seconds here (-short); scripts/test runs it")
	}
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("man is not installed" + install)
	}
	cmd := exec.Command("man", "--warnings", "-l", page)
	cmd.Env = append(os.Environ(), "MANWIDTH=80", "MANPAGER=cat", "PAGER=cat", "LC_ALL=C.UTF-8")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("man -l %s: %v\n%s", page, err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("man --warnings -l %s wrote to stderr:\n%s", page, stderr.String())
	}
	if !strings.Contains(stdout.String(), "lfinit - an init for containers") {
		t.Errorf("the rendered page lacks its NAME line:\n%.500s", stdout.String())
	}
}

// source is the page's text with roff's escaped hyphens made plain.
func source(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), `\-`, "-")
}

// TestCoversHelp: every option in lfinit --help, and the variable it
// names, is in the man page.
func TestCoversHelp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lfinit (-short); scripts/test runs it")
	}
	bin := filepath.Join(t.TempDir(), "lfinit")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/lfinit").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	help, err := exec.Command(bin, "--help").Output()
	if err != nil {
		t.Fatalf("lfinit --help: %v", err)
	}
	man := source(t)
	opts := regexp.MustCompile(`(?m)^\s+(--[a-z-]+)`).FindAllStringSubmatch(string(help), -1)
	vars := regexp.MustCompile(`\[(LFINIT_[A-Z_]+)\]`).FindAllStringSubmatch(string(help), -1)
	if len(opts) < 15 || len(vars) < 15 {
		t.Fatalf("found only %d options and %d variables in lfinit --help; has its format changed?\n%s", len(opts), len(vars), help)
	}
	for _, m := range opts {
		if !strings.Contains(man, ".B "+m[1]) && !strings.Contains(man, ".BI "+m[1]) && !strings.Contains(man, ".BR "+m[1]) {
			t.Errorf("option %s is not documented (no .B/.BI/.BR line for it)", m[1])
		}
	}
	for _, m := range vars {
		if strings.Count(man, m[1]) < 2 {
			t.Errorf("variable %s is not both under OPTIONS and ENVIRONMENT", m[1])
		}
	}
}

// TestCoversContract: the sections an operator looks for (the usual ones
// and lfinit's shutdown, phases, status file, metrics and probes), the
// budget inequality, and every status file key, phase and outcome.
func TestCoversContract(t *testing.T) {
	man := source(t)
	for _, sec := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SUBCOMMANDS", "SHUTDOWN", "PHASES",
		"EXIT STATUS", `"STATUS FILE"|STATUS FILE`, "METRICS AND PROBES", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"} {
		ok := false
		for _, alt := range strings.Split(sec, "|") {
			ok = ok || strings.Contains(man, "\n.SH "+alt+"\n")
		}
		if !ok {
			t.Errorf("no section %s", sec)
		}
	}
	for _, text := range []string{`stop timeout \(>= grace + floor + allowance`, "terminationGracePeriodSeconds",
		"ENTRYPOINT", "readinessProbe", "lfinit budget", "lfinit_phase"} {
		if !strings.Contains(man, text) {
			t.Errorf("the page never says %q", text)
		}
	}
	typ := reflect.TypeOf(statusfile.Status{})
	for i := range typ.NumField() {
		key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if !regexp.MustCompile(`(?m)^\.BR? .*\b` + regexp.QuoteMeta(key) + `\b`).MatchString(man) {
			t.Errorf("status file key %s is not documented", key)
		}
	}
	for _, p := range statusfile.Phases {
		if !strings.Contains(man, ".B "+string(p)) && !strings.Contains(man, ".BR "+string(p)) {
			t.Errorf("phase %s is not documented", p)
		}
	}
	for _, o := range statusfile.Outcomes {
		if !strings.Contains(man, ".BR "+string(o)) && !strings.Contains(man, ".B "+string(o)) {
			t.Errorf("outcome %s is not documented", o)
		}
	}
}

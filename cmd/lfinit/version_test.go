package main

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildInfo(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}, {Key: "GOARM", Value: "7"},
	}}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		name              string
		version, revision string
		bi                *debug.BuildInfo
		want              BuildInfo
	}{
		{"nothing known", "dev", "", nil, BuildInfo{"dev", "", false, runtime.Version(), platform}},
		{"from the toolchain", "dev", "", vcs, BuildInfo{"dev", "abc123", true, "go1.99", platform + "/v7"}},
		{"stamped wins", "1.2.3", "def456", vcs, BuildInfo{"1.2.3", "def456", true, "go1.99", platform + "/v7"}},
		{"pseudo-version", "dev", "", &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "v0.0.0-2026-abc+dirty"}},
			BuildInfo{"v0.0.0-2026-abc+dirty", "", false, "go1.99", platform}},
	} {
		if got := buildInfo(tc.version, tc.revision, tc.bi); got != tc.want {
			t.Errorf("%s: buildInfo = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"lfinit", "version"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("lfinit version: exit %d, stderr %q", code, errOut.String())
	}
	text := out.String()
	for _, want := range []string{"lfinit " + Build().Version + "\n", "commit: ", "go: " + runtime.Version(), "platform: " + runtime.GOOS + "/"} {
		if !strings.Contains(text, want) {
			t.Errorf("lfinit version = %q, missing %q", text, want)
		}
	}
	out.Reset()
	if code := run([]string{"lfinit", "--version"}, nil, &out, &errOut); code != 0 || out.String() != text {
		t.Errorf("lfinit --version: exit %d, %q; want lfinit version's %q", code, out.String(), text)
	}
	out.Reset()
	if code := run([]string{"lfinit", "version", "--json"}, nil, &out, &errOut); code != 0 {
		t.Fatalf("lfinit version --json: exit %d", code)
	}
	var b BuildInfo
	if err := json.Unmarshal(out.Bytes(), &b); err != nil || b != Build() {
		t.Errorf("lfinit version --json = %s (%v), want %+v", out.String(), err, Build())
	}
	errOut.Reset()
	if code := run([]string{"lfinit", "version", "extra"}, nil, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), `not "extra"`) {
		t.Errorf("lfinit version extra: exit %d, %q; want 2 and a usage error", code, errOut.String())
	}
}

// TestVersionFile wants the one version of the repository, VERSION, to be a
// semver (no leading v) and the man page's .TH to name it, so that the
// page a release installs is that release's.
func TestVersionFile(t *testing.T) {
	b, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSuffix(string(b), "\n")
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`).MatchString(v) {
		t.Fatalf("VERSION = %q, want MAJOR.MINOR.PATCH[-PRERELEASE] and one newline", b)
	}
	man, err := os.ReadFile("../../man/lfinit.1")
	if err != nil {
		t.Fatal(err)
	}
	th := regexp.MustCompile(`(?m)^\.TH LFINIT 1 [0-9]{4}-[0-9]{2}-[0-9]{2} "lfinit ([^"]+)"`).FindSubmatch(man)
	if th == nil || string(th[1]) != v {
		t.Errorf("man/lfinit.1's .TH names %q, want \"lfinit %s\" (VERSION)", th, v)
	}
}

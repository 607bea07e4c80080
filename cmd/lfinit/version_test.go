package main

import (
	"bytes"
	"encoding/json"
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

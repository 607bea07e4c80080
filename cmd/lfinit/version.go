package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/light-fabric/lfinit/exitcode"
)

// Stamped by scripts/build and scripts/release with -ldflags "-X
// main.version=… -X main.revision=… -X main.modified=true|false"; an
// unstamped build falls back on what the Go toolchain recorded (which it
// does not in a git worktree, nor with -buildvcs=false).
var (
	version  = "dev"
	revision = ""
	modified = ""
)

// BuildInfo is what lfinit knows of its own build; metrics' lfinit_build_info
// takes its Version and Revision.
type BuildInfo struct {
	Version   string `json:"version"`
	Revision  string `json:"revision"` // the commit, "" when unknown
	Modified  bool   `json:"modified"` // built from a tree with uncommitted changes
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"` // GOOS/GOARCH, and /vN for arm
}

// Build is this binary's BuildInfo: the stamped version and commit, else
// those of runtime/debug.ReadBuildInfo (vcs.revision, vcs.modified).
func Build() BuildInfo {
	bi, _ := debug.ReadBuildInfo()
	b := buildInfo(version, revision, bi)
	if modified != "" {
		b.Modified = modified == "true"
	}
	return b
}

// buildInfo merges the stamped values with the toolchain's record (nil
// when the binary has none).
func buildInfo(stampedVersion, stampedRevision string, bi *debug.BuildInfo) BuildInfo {
	b := BuildInfo{Version: stampedVersion, Revision: stampedRevision, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return b
	}
	b.GoVersion = bi.GoVersion
	var vcsRevision string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			vcsRevision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "GOARM":
			// "7" or "7,softfloat": the variant the binary needs.
			b.Platform += "/v" + string(s.Value[0])
		}
	}
	if b.Revision == "" {
		b.Revision = vcsRevision
	}
	// go build in a checkout records a pseudo-version such as
	// v0.0.0-20261130120000-1a2b3c4d5e6f+dirty; "(devel)" says nothing.
	if b.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Version = bi.Main.Version
	}
	return b
}

// String is the text form of lfinit version and lfinit --version.
func (b BuildInfo) String() string {
	rev := b.Revision
	switch {
	case rev == "":
		rev = "unknown"
	case b.Modified:
		rev += " (modified)"
	}
	return fmt.Sprintf("lfinit %s\ncommit: %s\ngo: %s\nplatform: %s\n", b.Version, rev, b.GoVersion, b.Platform)
}

// versionCmd is lfinit version [--json].
func versionCmd(c *config, args []string, stdout io.Writer) (int, error) {
	if len(args) > 0 {
		return exitcode.Usage, usagef("it takes no argument but --json, not %q", args[0])
	}
	b := Build()
	if !c.asJSON {
		fmt.Fprint(stdout, b)
		return 0, nil
	}
	out, _ := json.Marshal(b)
	fmt.Fprintf(stdout, "%s\n", out)
	return 0, nil
}

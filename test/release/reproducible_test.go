package release

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testVersion is the version the tests release as: VERSION's, as
// scripts/release releases no other.
var testVersion = func() string {
	b, err := os.ReadFile("../../VERSION")
	if err != nil {
		panic(err)
	}
	return strings.TrimSpace(string(b))
}()

// reproArches are the architectures of the release built twice and
// compared file by file: amd64 and one other (all 13 take minutes; the
// whole release is scripts/release's own, opt-in run).
var reproArches = []string{"amd64", "arm64"}

// first is the release built in the clone, of reproArches.
var first struct {
	once sync.Once
	out  string
	err  error
}

// withImage says whether the releases here build the OCI archive: it
// needs podman, as root here (scripts/install-qualification-deps).
func withImage() bool {
	_, err := exec.LookPath("podman")
	return err == nil && os.Geteuid() == 0
}

// releaseOpts are the options of the releases compared.
func releaseOpts() []string {
	if withImage() {
		return nil
	}
	return []string{"--no-image"}
}

// firstRelease builds the clone's release once, with the shared Go build
// cache, and returns its directory.
func firstRelease(t *testing.T) string {
	t.Helper()
	dir, _ := snapshotRepo(t)
	first.once.Do(func() {
		first.out = filepath.Join(state, "dist-clone")
		_, first.err = release(dir, first.out, reproArches, releaseOpts())
	})
	if first.err != nil {
		t.Fatal(first.err)
	}
	return first.out
}

// sourceDateEpoch is the time scripts/release dates everything with: the
// snapshot commit's.
func sourceDateEpoch(t *testing.T) time.Time {
	t.Helper()
	clone, _ := snapshotRepo(t)
	var out strings.Builder
	if err := git(&out, clone, "log", "-1", "--format=%ct", "HEAD"); err != nil {
		t.Fatal(err)
	}
	s, err := strconv.ParseInt(strings.TrimSpace(out.String()), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(s, 0)
}

// TestReproducible builds the same commit in a clone (shared build cache)
// and in a worktree of that clone at another path with an empty build cache
// and another time zone, at another moment, and wants two identical
// dist/ directories: the same files, byte for byte, binaries, .debs, OCI
// archive, SBOM, licence, man page and SHA256SUMS. It also wants
// SHA256SUMS to check, the OCI archive's tar headers dated
// SOURCE_DATE_EPOCH, and nothing of the release left in podman's store.
func TestReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release twice, once from an empty build cache (-short)")
	}
	clone, commit := snapshotRepo(t)
	a := firstRelease(t)
	wt := filepath.Join(state, "worktree")
	if err := git(nil, clone, "worktree", "add", "--quiet", "--detach", wt, commit); err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(state, "dist-worktree")
	// The SBOM generator is built with the shared cache (the empty one is
	// for lfinit's binaries; compiling the tool again only takes time).
	tool := sbomTool(t, clone)
	if _, err := release(wt, b, reproArches, releaseOpts(), "GOCACHE="+filepath.Join(state, "gocache"), "TZ=Pacific/Kiritimati",
		"LFINIT_SBOM_TOOL="+tool); err != nil {
		t.Fatal(err)
	}
	want := []string{"LICENSE", "NOTICE", "SHA256SUMS", "lfinit-" + testVersion + ".cdx.json", "lfinit.1"}
	for _, arch := range reproArches {
		want = append(want, "lfinit-"+testVersion+"-linux-"+arch, "lfinit_"+debVersion(testVersion)+"_"+arch+".deb")
	}
	if withImage() {
		want = append(want, "lfinit-"+testVersion+"-image.oci.tar")
	} else {
		t.Log("no podman here, or not root: the OCI archive is not built nor compared")
	}
	slices.Sort(want)
	for _, dir := range []string{a, b} {
		if got := fileNames(t, dir); !slices.Equal(got, want) {
			t.Fatalf("%s holds %v, want %v", dir, got, want)
		}
	}
	for _, name := range want {
		ba, errA := os.ReadFile(filepath.Join(a, name))
		bb, errB := os.ReadFile(filepath.Join(b, name))
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v, %v", name, errA, errB)
		}
		if !bytes.Equal(ba, bb) {
			t.Errorf("%s differs between %s and %s (%d and %d bytes): the release is not reproducible", name, clone, wt, len(ba), len(bb))
			continue
		}
		t.Logf("%s: %d bytes, identical", name, len(ba))
	}
	checkSums(t, a, want)
	checkStamp(t, filepath.Join(a, "lfinit-"+testVersion+"-linux-amd64"), commit)
	if withImage() {
		checkArchiveDates(t, filepath.Join(a, "lfinit-"+testVersion+"-image.oci.tar"), sourceDateEpoch(t))
		checkNoPodmanLeftovers(t, commit)
	}
}

// sbomTool installs the cyclonedx-gomod scripts/release pins into the
// package's temporary directory and returns its path.
func sbomTool(t *testing.T, clone string) string {
	t.Helper()
	script, err := os.ReadFile(filepath.Join(clone, "scripts", "release"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^sbom_tool=(\S+@v\S+)$`).FindSubmatch(script)
	if m == nil {
		t.Fatal("scripts/release pins no sbom_tool=MODULE@VERSION")
	}
	bin := filepath.Join(state, "bin")
	cmd := exec.Command("go", "install", string(m[1]))
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install %s: %v\n%s", m[1], err, out)
	}
	return filepath.Join(bin, "cyclonedx-gomod")
}

// fileNames lists the files of dir, sorted.
func fileNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// debVersion is Debian's spelling of a semver: a pre-release's - is ~.
func debVersion(v string) string { return strings.ReplaceAll(v, "-", "~") }

// checkSums runs sha256sum -c SHA256SUMS in dir, as a user does, and wants
// it to name every file of the release but itself (and its signature).
func checkSums(t *testing.T, dir string, files []string) {
	t.Helper()
	cmd := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("sha256sum -c SHA256SUMS: %v\n%s", err, out)
	}
	var listed []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		listed = append(listed, strings.TrimSuffix(l, ": OK"))
	}
	want := slices.DeleteFunc(slices.Clone(files), func(f string) bool { return strings.HasPrefix(f, "SHA256SUMS") })
	if !slices.Equal(listed, want) {
		t.Errorf("SHA256SUMS lists %v, want %v", listed, want)
	}
}

// checkArchiveDates wants every tar header of the OCI archive dated
// SOURCE_DATE_EPOCH and owned by 0:0, not the wall clock of the push.
func checkArchiveDates(t *testing.T, archive string, sde time.Time) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	n := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		n++
		if !h.ModTime.Equal(sde) || h.Uid != 0 || h.Gid != 0 {
			t.Errorf("%s: %s dated %v, owned %d:%d; want %v (SOURCE_DATE_EPOCH), 0:0", archive, h.Name, h.ModTime.UTC(), h.Uid, h.Gid, sde.UTC())
		}
	}
	if n == 0 {
		t.Errorf("%s: empty archive", archive)
	}
}

// checkNoPodmanLeftovers wants no image of the release in the system's
// podman store: scripts/release-image works in a store of its own.
func checkNoPodmanLeftovers(t *testing.T, commit string) {
	t.Helper()
	out, err := exec.Command("podman", "images", "--all", "--noheading", "--filter",
		"label=org.opencontainers.image.revision="+commit, "--format", "{{.ID}} {{.Repository}}:{{.Tag}}").CombinedOutput()
	if err != nil {
		t.Fatalf("podman images: %v\n%s", err, out)
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		t.Errorf("the release left images in podman's store:\n%s", s)
	}
}

// checkStamp wants lfinit version of the native binary to name the release.
func checkStamp(t *testing.T, bin, commit string) {
	t.Helper()
	out, err := exec.Command(bin, "version").CombinedOutput()
	want := "lfinit " + testVersion + "\ncommit: " + commit + "\n"
	if err != nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("%s version = %q (%v), want it to start with %q", bin, out, err, want)
	}
}

// checkStaticStripped wants an ELF with no interpreter (static: it runs FROM
// scratch) and no symbol table (stripped).
func checkStaticStripped(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has an ELF interpreter: not static", bin)
		}
	}
	if f.Section(".symtab") != nil {
		t.Errorf("%s has a symbol table: not stripped", bin)
	}
}

package release

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// testVersion is the version the tests release as.
const testVersion = "0.0.0-test"

// reproArch is the architecture built twice.
const reproArch = "amd64"

// first is the release built in the clone: reproArch and the qemu arches.
var first struct {
	once sync.Once
	out  string
	err  error
}

// qemuArches are the architectures tested when no release dir is given.
func qemuArches() []string {
	if v := os.Getenv("LFINIT_RELEASE_ARCHES"); v != "" {
		return strings.Split(v, ",")
	}
	return []string{"arm64", "s390x"}
}

// firstRelease builds the clone's release once, with the shared Go build
// cache, and returns its directory.
func firstRelease(t *testing.T) string {
	t.Helper()
	dir, _ := snapshotRepo(t)
	first.once.Do(func() {
		first.out = filepath.Join(state, "dist-clone")
		arches := append([]string{reproArch}, qemuArches()...)
		slices.Sort(arches)
		first.err = release(dir, first.out, testVersion, slices.Compact(arches))
	})
	if first.err != nil {
		t.Fatal(first.err)
	}
	return first.out
}

// TestReproducible builds the same commit in a clone (shared build cache)
// and in a worktree of that clone at another path with an empty build cache
// and another time zone, and wants byte-identical binaries.
func TestReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds lfinit twice, once from an empty build cache (-short)")
	}
	clone, commit := snapshotRepo(t)
	a := firstRelease(t)
	wt := filepath.Join(state, "worktree")
	if err := git(nil, clone, "worktree", "add", "--quiet", "--detach", wt, commit); err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(state, "dist-worktree")
	if err := release(wt, b, testVersion, []string{reproArch}, "GOCACHE="+filepath.Join(state, "gocache"), "TZ=Pacific/Kiritimati"); err != nil {
		t.Fatal(err)
	}
	name := "lfinit-" + testVersion + "-linux-" + reproArch
	ba, errA := os.ReadFile(filepath.Join(a, name))
	bb, errB := os.ReadFile(filepath.Join(b, name))
	if errA != nil || errB != nil {
		t.Fatalf("release binaries: %v, %v", errA, errB)
	}
	if !bytes.Equal(ba, bb) {
		t.Fatalf("%s differs between %s and %s (%d and %d bytes): the build is not reproducible", name, clone, wt, len(ba), len(bb))
	}
	t.Logf("%s: %d bytes, identical from %s and %s", name, len(ba), clone, wt)
	checkSums(t, a)
	checkStamp(t, filepath.Join(a, name), commit)
}

// checkSums runs sha256sum -c SHA256SUMS in dir, as a user does.
func checkSums(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c SHA256SUMS: %v\n%s", err, out)
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

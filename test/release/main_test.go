// Package release tests what scripts/release ships: the same commit built
// in two directories gives a byte-identical dist/ (binaries, .debs, OCI
// archive, SBOM, checksums), the .deb is lintian-clean and installs and
// runs, the SBOM lists the linked modules, --sign signs SHA256SUMS, a
// version without its CHANGELOG entry is refused, and every release binary
// passes a core end-to-end subset under qemu-user (Debian's
// qemu-user-static) as PID 1 of a PID namespace. Both build from a clean
// snapshot of the working tree (a clone, plus a worktree of that clone), so
// they test the code as it is, committed or not.
//
// With LFINIT_RELEASE_DIR set (scripts/release does), the binaries of that
// directory are tested instead: every architecture. Otherwise
// LFINIT_RELEASE_ARCHES (default arm64,s390x: one little-endian, one
// big-endian) are built and tested. The two-clone comparison builds amd64
// and arm64 (a whole release of all 13 architectures is scripts/release's
// own run, opt-in: it takes minutes).
package release

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	repo  string // the repository under test
	state string // temporary directory of the package's builds
)

func TestMain(m *testing.M) {
	var err error
	if repo, err = filepath.Abs("../.."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if state, err = os.MkdirTemp("", "lfinit-release-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if snap.dir != "" {
		// The worktree registered in the clone goes with the clone.
		git(nil, snap.dir, "worktree", "remove", "--force", filepath.Join(state, "worktree"))
	}
	os.RemoveAll(state)
	os.Exit(code)
}

// snapshot is a clean commit of the working tree in a clone of the repository.
var snap struct {
	once   sync.Once
	dir    string
	commit string
	err    error
}

// snapshotRepo clones the repository, lays the working tree's files over
// the clone (tracked and untracked, not ignored), and commits them if they
// differ from HEAD, so scripts/release finds a clean tree.
func snapshotRepo(t *testing.T) (dir, commit string) {
	t.Helper()
	snap.once.Do(func() {
		snap.dir = filepath.Join(state, "clone")
		if snap.err = git(nil, "", "clone", "--quiet", repo, snap.dir); snap.err != nil {
			return
		}
		if snap.err = overlay(repo, snap.dir); snap.err != nil {
			return
		}
		var st strings.Builder
		if snap.err = git(&st, snap.dir, "status", "--porcelain"); snap.err != nil {
			return
		}
		if st.Len() > 0 {
			if snap.err = git(nil, snap.dir, "add", "-A"); snap.err != nil {
				return
			}
			if snap.err = git(nil, snap.dir, "-c", "user.name=lfinit test", "-c", "user.email=test@lfinit.invalid",
				"commit", "--quiet", "--no-verify", "-m", "test/release: snapshot of the working tree"); snap.err != nil {
				return
			}
		}
		var rev strings.Builder
		snap.err = git(&rev, snap.dir, "rev-parse", "HEAD")
		snap.commit = strings.TrimSpace(rev.String())
	})
	if snap.err != nil {
		t.Fatalf("snapshot of the working tree: %v", snap.err)
	}
	return snap.dir, snap.commit
}

// overlay copies the working tree's files from src over dst, and removes
// from dst those deleted in src.
func overlay(src, dst string) error {
	var files, deleted strings.Builder
	if err := git(&files, src, "ls-files", "-z", "--cached", "--others", "--exclude-standard"); err != nil {
		return err
	}
	if err := git(&deleted, src, "ls-files", "-z", "--deleted"); err != nil {
		return err
	}
	gone := map[string]bool{}
	for _, f := range strings.Split(deleted.String(), "\x00") {
		if f != "" {
			gone[f] = true
			os.Remove(filepath.Join(dst, f))
		}
	}
	for _, f := range strings.Split(files.String(), "\x00") {
		if f == "" || gone[f] {
			continue
		}
		if err := copyFile(filepath.Join(src, f), filepath.Join(dst, f)); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	os.Remove(dst)
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, fi.Mode().Perm())
}

// git runs git in dir (the current directory when ""), its output into out
// when not nil.
func git(out *strings.Builder, dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if out != nil {
		cmd.Stdout = out
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return nil
}

// release runs scripts/release in dir with extra environment env, for
// arches, without tests, into out, with the extra options opts.
func release(dir, out string, arches, opts []string, env ...string) (string, error) {
	args := append([]string{"--no-test", "--out", out, "--arch", strings.Join(arches, ",")}, opts...)
	cmd := exec.Command("scripts/release", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		return string(b), fmt.Errorf("scripts/release %s in %s: %v\n%s", strings.Join(args, " "), dir, err, b)
	}
	return string(b), nil
}

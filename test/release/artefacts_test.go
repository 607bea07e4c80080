package release

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// needRoot skips a test that needs root and the given commands, saying how
// to get them (CI runs as root with scripts/install-qualification-deps).
func needRoot(t *testing.T, commands ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a release (-short)")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, as in CI (dpkg --root, podman)")
	}
	for _, c := range commands {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("%s not found: install it with scripts/install-qualification-deps, as CI does", c)
		}
	}
}

// TestDeb checks the .debs of the clone's release: lintian finds no error
// or warning, each holds lfinit in /usr/bin, its man page gzipped, the
// copyright and the changelog of this version, every entry owned by root
// and dated SOURCE_DATE_EPOCH; the amd64 one installs into a temporary
// root with dpkg --root, runs a child from there (exit code passed
// through), and is removed again leaving no file.
func TestDeb(t *testing.T) {
	needRoot(t, "dpkg", "dpkg-deb", "lintian")
	dir := firstRelease(t)
	sde := sourceDateEpoch(t)
	for _, arch := range reproArches {
		deb := filepath.Join(dir, "lfinit_"+debVersion(testVersion)+"_"+arch+".deb")
		t.Run(arch, func(t *testing.T) {
			out, err := exec.Command("lintian", "--fail-on", "error,warning", "--info", deb).CombinedOutput()
			if err != nil {
				t.Errorf("lintian %s: %v\n%s", deb, err, out)
			}
			for _, field := range []string{"Package=lfinit", "Version=" + debVersion(testVersion), "Architecture=" + arch} {
				name, want, _ := strings.Cut(field, "=")
				if got, err := exec.Command("dpkg-deb", "--field", deb, name).Output(); err != nil || strings.TrimSpace(string(got)) != want {
					t.Errorf("%s: %s is %q (%v), want %q", deb, name, got, err, want)
				}
			}
			checkDebContents(t, deb, sde)
		})
	}

	root := t.TempDir()
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "var/lib/dpkg/status"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dpkg := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("dpkg", append([]string{"--root=" + root, "--log=/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("dpkg %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	dpkg("--install", filepath.Join(dir, "lfinit_"+debVersion(testVersion)+"_amd64.deb"))
	if out := dpkg("--status", "lfinit"); !strings.Contains(out, "Status: install ok installed") {
		t.Errorf("dpkg --status lfinit after --install:\n%s", out)
	}
	bin := filepath.Join(root, "usr/bin/lfinit")
	_, commit := snapshotRepo(t)
	checkStamp(t, bin, commit)
	cmd := exec.Command(bin, "--", "/bin/sh", "-c", "exit 3")
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("installed lfinit -- sh -c 'exit 3': %v, want exit 3", err)
	}
	man := readGzip(t, filepath.Join(root, "usr/share/man/man1/lfinit.1.gz"))
	if !regexp.MustCompile(`(?m)^\.TH LFINIT 1 \S+ "lfinit ` + regexp.QuoteMeta(testVersion) + `"`).MatchString(man) {
		t.Errorf("the installed man page's .TH does not name lfinit %s", testVersion)
	}
	if cl := readGzip(t, filepath.Join(root, "usr/share/doc/lfinit/changelog.gz")); !strings.HasPrefix(cl, "lfinit ("+debVersion(testVersion)+") ") {
		t.Errorf("changelog.gz starts %q, want a Debian changelog entry for %s", cl[:min(len(cl), 60)], testVersion)
	}
	if b, err := os.ReadFile(filepath.Join(root, "usr/share/doc/lfinit/copyright")); err != nil || !strings.Contains(string(b), "License: Apache-2.0") {
		t.Errorf("copyright: %v, want a machine-readable Apache-2.0 copyright", err)
	}
	dpkg("--remove", "lfinit")
	for _, f := range []string{"usr/bin/lfinit", "usr/share/man/man1/lfinit.1.gz", "usr/share/doc/lfinit"} {
		if _, err := os.Lstat(filepath.Join(root, f)); err == nil {
			t.Errorf("%s is left after dpkg --remove lfinit", f)
		}
	}
}

// checkDebContents wants the data of deb to be exactly the package's
// files, root-owned and dated SOURCE_DATE_EPOCH.
func checkDebContents(t *testing.T, deb string, sde time.Time) {
	t.Helper()
	out, err := exec.Command("dpkg-deb", "--fsys-tarfile", deb).Output()
	if err != nil {
		t.Fatalf("dpkg-deb --fsys-tarfile %s: %v", deb, err)
	}
	tr := tar.NewReader(strings.NewReader(string(out)))
	files := map[string]bool{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", deb, err)
		}
		if h.Uname != "root" || h.Gname != "root" || h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(sde) {
			t.Errorf("%s: %s owned %s:%s (%d:%d), dated %v; want root:root, %v", deb, h.Name, h.Uname, h.Gname, h.Uid, h.Gid, h.ModTime.UTC(), sde.UTC())
		}
		if h.Typeflag == tar.TypeReg {
			files[strings.TrimPrefix(h.Name, "./")] = true
		}
	}
	for _, f := range []string{"usr/bin/lfinit", "usr/share/man/man1/lfinit.1.gz", "usr/share/doc/lfinit/copyright",
		"usr/share/doc/lfinit/changelog.gz", "usr/share/lintian/overrides/lfinit"} {
		if !files[f] {
			t.Errorf("%s has no %s", deb, f)
		}
		delete(files, f)
	}
	if len(files) > 0 {
		t.Errorf("%s holds more files than the package's: %v", deb, files)
	}
}

func readGzip(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(b)
}

// TestSBOM checks the clone's release's SBOM: CycloneDX JSON naming
// lfinit at the release's version, no serial number and no timestamp
// (nothing that changes between two builds), and, at the version go.mod
// selects, every module linked into the binary (go list -deps), the Go
// standard library included.
func TestSBOM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release (-short)")
	}
	dir := firstRelease(t)
	b, err := os.ReadFile(filepath.Join(dir, "lfinit-"+testVersion+".cdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		BOMFormat    string `json:"bomFormat"`
		SerialNumber string `json:"serialNumber"`
		Metadata     struct {
			Timestamp string `json:"timestamp"`
			Component struct{ Name, Version string }
		}
		Components []struct{ Name, Version string }
	}
	if err := json.Unmarshal(b, &bom); err != nil {
		t.Fatalf("SBOM: %v", err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.SerialNumber != "" || bom.Metadata.Timestamp != "" {
		t.Errorf("SBOM: bomFormat %q, serialNumber %q, timestamp %q; want CycloneDX and neither of the others", bom.BOMFormat, bom.SerialNumber, bom.Metadata.Timestamp)
	}
	if c := bom.Metadata.Component; c.Name != "github.com/light-fabric/lfinit" || c.Version != "v"+testVersion {
		t.Errorf("SBOM describes %s %s, want github.com/light-fabric/lfinit v%s", c.Name, c.Version, testVersion)
	}
	got := map[string]string{}
	for _, c := range bom.Components {
		got[c.Name] = c.Version
	}
	clone, _ := snapshotRepo(t)
	cmd := exec.Command("go", "list", "-deps", "-tags", "nethttpomithttp2", "-f", "{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}", "./cmd/lfinit")
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	want := strings.Fields(string(out))
	for i := 0; i+1 < len(want); i += 2 {
		if got[want[i]] != want[i+1] {
			t.Errorf("SBOM lists %s at %q, want %s (linked into the binary)", want[i], got[want[i]], want[i+1])
		}
	}
	if len(want) == 0 || !strings.HasPrefix(got["std"], "go1.") {
		t.Errorf("SBOM: %d modules from go list, std at %q; want some and the standard library", len(want)/2, got["std"])
	}
}

// TestSign makes a throwaway GPG key in a temporary GNUPGHOME, releases
// with --sign and verifies SHA256SUMS.asc with gpgv and only that key, as
// a user does; a changed SHA256SUMS fails the check, and --sign with a key
// gpg does not have is refused before anything is built.
func TestSign(t *testing.T) {
	needRoot(t, "gpg", "gpgv", "gpgconf")
	clone, _ := snapshotRepo(t)
	home, err := os.MkdirTemp("", "lfinit-gpg-") // short: gpg-agent's socket lives here
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"GNUPGHOME=" + home}
	gpg := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("gpg", append([]string{"--batch", "--no-tty"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("gpg %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	t.Cleanup(func() {
		cmd := exec.Command("gpgconf", "--kill", "all")
		cmd.Env = append(os.Environ(), env...)
		cmd.Run()
		os.RemoveAll(home)
	})
	gpg("--passphrase", "", "--quick-generate-key", "lfinit release test <release-test@lfinit.invalid>", "ed25519", "sign", "1d")
	fpr := regexp.MustCompile(`(?m)^fpr:+([0-9A-F]{40}):`).FindStringSubmatch(gpg("--with-colons", "--list-secret-keys"))
	if fpr == nil {
		t.Fatal("no fingerprint of the key just made")
	}
	out := filepath.Join(state, "dist-signed")
	if _, err := release(clone, out, []string{"amd64"}, []string{"--no-image", "--no-deb", "--sign", fpr[1]}, env...); err != nil {
		t.Fatal(err)
	}
	keyring := filepath.Join(home, "release-key.gpg")
	if err := os.WriteFile(keyring, []byte(gpg("--export", fpr[1])), 0o644); err != nil {
		t.Fatal(err)
	}
	sig, sums := filepath.Join(out, "SHA256SUMS.asc"), filepath.Join(out, "SHA256SUMS")
	if b, err := exec.Command("gpgv", "--keyring", keyring, sig, sums).CombinedOutput(); err != nil {
		t.Errorf("gpgv --keyring KEY SHA256SUMS.asc SHA256SUMS: %v\n%s", err, b)
	}
	b, err := os.ReadFile(sums)
	if err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(home, "SHA256SUMS")
	os.WriteFile(changed, append(b, "0000000000000000000000000000000000000000000000000000000000000000  lfinit-evil\n"...), 0o644)
	if err := exec.Command("gpgv", "--keyring", keyring, sig, changed).Run(); err == nil {
		t.Error("gpgv accepted the signature over a changed SHA256SUMS")
	}

	msg, err := release(clone, filepath.Join(state, "dist-unsigned"), []string{"amd64"}, []string{"--no-image", "--no-deb", "--sign", "no-such-key@lfinit.invalid"}, env...)
	if err == nil || !strings.Contains(msg, "no secret key") {
		t.Errorf("--sign with an unknown key: %v, %q; want a refusal", err, msg)
	}
}

// TestRefusals: scripts/release refuses a version other than VERSION's,
// and a VERSION with no CHANGELOG entry, before building anything.
func TestRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	clone, commit := snapshotRepo(t)
	out := filepath.Join(state, "dist-refused")
	msg, err := release(clone, out, []string{"amd64"}, []string{"9.9.9"})
	if err == nil || !strings.Contains(msg, "not the one in VERSION") {
		t.Errorf("scripts/release 9.9.9 with VERSION %s: %v, %q; want a refusal", testVersion, err, msg)
	}
	wt := filepath.Join(state, "worktree-refused")
	if err := git(nil, clone, "worktree", "add", "--quiet", "--detach", wt, commit); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { git(nil, clone, "worktree", "remove", "--force", wt) })
	if err := os.WriteFile(filepath.Join(wt, "VERSION"), []byte("9.9.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	msg, err = release(wt, out, []string{"amd64"}, nil)
	if err == nil || !strings.Contains(msg, "CHANGELOG.md has no entry for 9.9.9") {
		t.Errorf("scripts/release with VERSION 9.9.9 and no CHANGELOG entry: %v, %q; want a refusal", err, msg)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused release wrote %s", out)
	}
}

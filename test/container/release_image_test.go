package container

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// releaseVersion is the version the release image is built as here.
const releaseVersion = "0.0.0-test"

// TestReleaseImage builds the release image with scripts/release-image for
// two architectures, checks that it left nothing in podman's store (it
// works in one of its own) and that its OCI archive is a manifest list of
// images holding only /lfinit and its LICENSE and NOTICE (in
// /usr/share/doc/lfinit), loads the archive as a user would, builds an
// image with Dockerfile.example's COPY --from=lfinit line, and stops a
// container of it: lfinit from the archive runs the service and exits 0.
func TestReleaseImage(t *testing.T) {
	needPodman(t)
	dir := t.TempDir()
	arches := []string{"amd64", "arm64"}
	for _, a := range arches {
		if err := buildRelease(dir, a); err != nil {
			t.Fatal(err)
		}
	}
	// A commit of this run's own, to find what the script might leave.
	commit := fmt.Sprintf("%040x", time.Now().UnixNano())
	cmd := exec.Command(filepath.Join(repo, "scripts", "release-image"), append([]string{releaseVersion, commit, dir}, arches...)...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("SOURCE_DATE_EPOCH=%d", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release-image: %v\n%s", err, out)
	}
	archive := filepath.Join(dir, "lfinit-"+releaseVersion+"-image.oci.tar")
	checkArchive(t, archive, []string{"linux/amd64", "linux/arm64"})

	// From the archive only: scripts/release-image left nothing here.
	image := "localhost/lfinit:" + releaseVersion
	if out, err := podmanCmd(time.Minute, "manifest", "exists", image); err == nil {
		t.Errorf("scripts/release-image left the manifest list %s in podman's store (%s)", image, out)
	}
	if out := podman(t, "images", "--all", "--noheading", "--filter", "label=org.opencontainers.image.revision="+commit, "--format", "{{.ID}}"); out != "" {
		t.Errorf("scripts/release-image left images in podman's store: %s", out)
	}
	podman(t, "load", "--quiet", "--input", archive)
	if out := podman(t, "run", "--rm", "--network", "none", image, "version"); !strings.HasPrefix(out, "lfinit "+releaseVersion+"\n") {
		t.Errorf("podman run %s version: %q", image, out)
	}

	cf := "FROM scratch\n" + exampleCopyFrom(t) + `
COPY helper /helper
ENV LFINIT_LOG_FORMAT=json
ENTRYPOINT ["/lfinit", "--exit-map", "143=0", "--"]
CMD ["/helper", "-record", "/rec/record", "-ready-file", "/rec/ready"]
`
	tag := "localhost/lfinit-copy-from:test"
	if err := buildImage(filepath.Join(dir, "ctx"), tag, cf, map[string]string{"helper": "helper"}); err != nil {
		t.Fatal(err)
	}
	c := run(t, tag, nil)
	c.waitFile("ready")
	if out := podman(t, "exec", c.name, "/lfinit", "version"); !strings.HasPrefix(out, "lfinit "+releaseVersion+"\n") {
		t.Errorf("lfinit version in the container: %q, want the release's", out)
	}
	c.stop(10)
	checkExit(t, c, "graceful", 0)
}

// buildRelease builds dir/lfinit-VERSION-linux-ARCH as scripts/release does.
func buildRelease(dir, arch string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-tags", "nethttpomithttp2", "-gcflags", "google.golang.org/protobuf/...=-l",
		"-ldflags", "-s -w -buildid= -X main.version="+releaseVersion,
		"-o", filepath.Join(dir, "lfinit-"+releaseVersion+"-linux-"+arch), "./cmd/lfinit")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build for %s: %v\n%s", arch, err, out)
	}
	return nil
}

// exampleCopyFrom is Dockerfile.example's commented COPY --from=lfinit:VERSION
// line, uncommented and set to releaseVersion.
func exampleCopyFrom(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(repo, "Dockerfile.example"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(text), "\n") {
		f := strings.Fields(strings.TrimPrefix(l, "#"))
		if len(f) == 4 && f[0] == "COPY" && strings.HasPrefix(f[1], "--from=lfinit:") && f[2] == "/lfinit" {
			return "COPY --from=lfinit:" + releaseVersion + " /lfinit " + f[3]
		}
	}
	t.Fatal("Dockerfile.example has no COPY --from=lfinit:VERSION /lfinit line")
	return ""
}

// ociDescriptor is the part of an OCI descriptor, index or manifest read here.
type ociDescriptor struct {
	MediaType string                                      `json:"mediaType"`
	Digest    string                                      `json:"digest"`
	Platform  *struct{ OS, Architecture, Variant string } `json:"platform"`
	Manifests []ociDescriptor                             `json:"manifests"`
	Layers    []ociDescriptor                             `json:"layers"`
}

// checkArchive wants one manifest list in the OCI archive, with one image
// per platform, each of one layer holding only lfinit.
func checkArchive(t *testing.T, archive string, platforms []string) {
	t.Helper()
	blobs, err := readTar(archive)
	if err != nil {
		t.Fatal(err)
	}
	blob := func(d ociDescriptor) ociDescriptor {
		var v ociDescriptor
		if err := json.Unmarshal(blobs["blobs/"+strings.Replace(d.Digest, ":", "/", 1)], &v); err != nil {
			t.Fatalf("%s: blob %s: %v", archive, d.Digest, err)
		}
		return v
	}
	var top ociDescriptor
	if err := json.Unmarshal(blobs["index.json"], &top); err != nil || len(top.Manifests) != 1 {
		t.Fatalf("%s: index.json %s (%v): want one manifest list", archive, blobs["index.json"], err)
	}
	var got []string
	for _, m := range blob(top.Manifests[0]).Manifests {
		if m.Platform == nil {
			t.Fatalf("%s: an image without a platform", archive)
		}
		got = append(got, strings.TrimSuffix(m.Platform.OS+"/"+m.Platform.Architecture+"/"+m.Platform.Variant, "/"))
		layers := blob(m).Layers
		if len(layers) != 1 {
			t.Errorf("%s: %d layers, want 1", got[len(got)-1], len(layers))
			continue
		}
		files, err := layerFiles(blobs["blobs/"+strings.Replace(layers[0].Digest, ":", "/", 1)], layers[0].MediaType)
		var names []string
		for name := range files {
			names = append(names, name)
		}
		slices.Sort(names)
		want := []string{"lfinit", "usr/", "usr/share/", "usr/share/doc/", "usr/share/doc/lfinit/",
			"usr/share/doc/lfinit/LICENSE", "usr/share/doc/lfinit/NOTICE"}
		if err != nil || !slices.Equal(names, want) {
			t.Errorf("%s: the layer holds %v (%v), want %v", got[len(got)-1], names, err, want)
		}
		for _, f := range []string{"LICENSE", "NOTICE"} {
			if b, err := os.ReadFile(filepath.Join(repo, f)); err != nil || files["usr/share/doc/lfinit/"+f] != string(b) {
				t.Errorf("%s: the image's /usr/share/doc/lfinit/%s is not the repository's %s", got[len(got)-1], f, f)
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, platforms) {
		t.Errorf("%s: platforms %v, want %v", archive, got, platforms)
	}
}

// readTar reads every regular file of a tar archive into memory.
func readTar(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if files[strings.TrimPrefix(h.Name, "./")], err = io.ReadAll(tr); err != nil {
				return nil, err
			}
		}
	}
}

// layerFiles reads the entries of an image layer (directories included,
// with a trailing /), each with its content.
func layerFiles(layer []byte, mediaType string) (map[string]string, error) {
	var r io.Reader = strings.NewReader(string(layer))
	if strings.HasSuffix(mediaType, "+gzip") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		r = zr
	}
	files := map[string]string{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[strings.TrimPrefix(h.Name, "./")] = string(b)
	}
}

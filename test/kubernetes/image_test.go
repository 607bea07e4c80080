package kubernetes

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"sort"
)

// image is a FROM-scratch image: static binaries at absolute paths.
type image struct {
	name       string            // e.g. lfinit-test/app:1
	files      map[string]string // path in the image → file on the host
	entrypoint []string
}

// ociArchive writes img as an OCI image layout tarball, what
// `ctr images import` takes: one layer, no registry.
func (img image) ociArchive(out string) error {
	layer, err := img.layer()
	if err != nil {
		return err
	}
	layerDigest := digest(layer)
	config, _ := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Entrypoint": img.entrypoint, "Env": []string{"PATH=/"}},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layerDigest}},
	})
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        descriptor("application/vnd.oci.image.config.v1+json", config),
		"layers":        []any{descriptor("application/vnd.oci.image.layer.v1.tar", layer)},
	})
	md := descriptor("application/vnd.oci.image.manifest.v1+json", manifest)
	md["annotations"] = map[string]string{"org.opencontainers.image.ref.name": img.name, "io.containerd.image.name": img.name}
	index, _ := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []any{md}})

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, data []byte) {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg})
		tw.Write(data)
	}
	add("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`))
	add("index.json", index)
	for _, b := range [][]byte{layer, config, manifest} {
		add("blobs/sha256/"+digest(b)[len("sha256:"):], b)
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// layer is the image's one layer: its files, executable, and /tmp.
func (img image) layer() ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "tmp/", Mode: 0o1777, Typeflag: tar.TypeDir})
	paths := make([]string, 0, len(img.files))
	for p := range img.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		data, err := os.ReadFile(img.files[p])
		if err != nil {
			return nil, err
		}
		hdr := &tar.Header{Name: p[1:], Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		tw.Write(data)
	}
	return buf.Bytes(), tw.Close()
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func descriptor(mediaType string, b []byte) map[string]any {
	return map[string]any{"mediaType": mediaType, "digest": digest(b), "size": len(b)}
}

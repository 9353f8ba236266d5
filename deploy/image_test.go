package deploy_test

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// imageArchive is where `make image` saves the OCI archive (deploy/docker/buildah.sh).
const imageArchive = "bin/flotilla-image.tar"

// maxImageBytes bounds the compressed layers: the static binary compresses to
// about 30 MiB; anything much larger means something else got into the image.
const maxImageBytes = 48 << 20

// ociImage is what an OCI archive says about its one image.
type ociImage struct {
	config struct {
		User         string   `json:"User"`
		Entrypoint   []string `json:"Entrypoint"`
		Cmd          []string `json:"Cmd"`
		ExposedPorts map[string]struct{}
	}
	layerBytes int64             // compressed, as stored
	files      map[string]string // path -> "file 0555 0:0", "dir", "symlink -> x"...
}

// TestImage inspects the image `make image` built (run by `make image-test`).
// It skips when there is no archive, unless FLOTILLA_IMAGE_TEST=1 asks for it.
func TestImage(t *testing.T) {
	archive := filepath.Join(repoRoot(t), imageArchive)
	if _, err := os.Stat(archive); err != nil {
		if os.Getenv("FLOTILLA_IMAGE_TEST") == "1" {
			t.Fatalf("FLOTILLA_IMAGE_TEST=1 but %v (run `make image`)", err)
		}
		t.Skipf("no %s: `make image-test` builds and inspects it", imageArchive)
	}
	img, err := readOCIArchive(archive)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("65532:65532", img.config.User); diff != "" {
		t.Errorf("User (-want +got): numeric and non-root, so that runAsNonRoot can check it:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/flotilla"}, img.config.Entrypoint); diff != "" {
		t.Errorf("Entrypoint (-want +got):\n%s", diff)
	}
	if len(img.config.Cmd) > 0 {
		t.Errorf("Cmd %q: want none (the manifests name the daemon in args)", img.config.Cmd)
	}
	wantFiles := map[string]string{
		"etc":                               "dir",
		"etc/ssl":                           "dir",
		"etc/ssl/certs":                     "dir",
		"etc/ssl/certs/ca-certificates.crt": "file 0444 0:0",
		"flotilla":                          "file 0555 0:0",
	}
	if diff := cmp.Diff(wantFiles, img.files); diff != "" {
		t.Errorf("files of the layers (-want +got): the binary and the CA bundle only, no shell:\n%s", diff)
	}
	if img.layerBytes > maxImageBytes {
		t.Errorf("layers are %d MiB, want at most %d MiB", img.layerBytes>>20, maxImageBytes>>20)
	}
}

// TestReadOCIArchiveSeesAShell checks the inspection itself on a hand-made
// archive: a layer holding /bin/sh must show up in files.
func TestReadOCIArchiveSeesAShell(t *testing.T) {
	dir := t.TempDir()
	layer := tarBytes(t, map[string]string{"bin/sh": "#!", "flotilla": "ELF"}, true)
	config := []byte(`{"config":{"User":"0","Entrypoint":["/bin/sh"]}}`)
	manifest := fmt.Sprintf(`{"config":{"digest":"sha256:c"},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:l","size":%d}]}`, len(layer))
	archive := tarBytes(t, map[string]string{
		"index.json":     `{"manifests":[{"digest":"sha256:m"}]}`,
		"blobs/sha256/m": manifest,
		"blobs/sha256/c": string(config),
		"blobs/sha256/l": string(layer),
		"oci-layout":     `{"imageLayoutVersion":"1.0.0"}`,
	}, false)
	file := filepath.Join(dir, "image.tar")
	if err := os.WriteFile(file, archive, 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := readOCIArchive(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"bin/sh": "file 0644 0:0", "flotilla": "file 0644 0:0"}, img.files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("0", img.config.User); diff != "" {
		t.Errorf("User (-want +got):\n%s", diff)
	}
}

// tarBytes is a tar (gzipped if asked) of regular files, mode 0644, owned by 0:0.
func tarBytes(t *testing.T, files map[string]string, gz bool) []byte {
	t.Helper()
	var buf strings.Builder
	var w io.Writer = &buf
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		w = zw
	}
	tw := tar.NewWriter(w)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, files[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return []byte(buf.String())
}

// readOCIArchive follows an OCI image layout in a tar (buildah push
// oci-archive:): index.json -> the one manifest -> its config and layers,
// and lists every path the layers create (whiteouts are not expected in a
// FROM scratch image and are reported as such).
func readOCIArchive(file string) (*ociImage, error) {
	blobs, err := readTar(file)
	if err != nil {
		return nil, err
	}
	var index struct {
		Manifests []struct{ Digest string } `json:"manifests"`
	}
	if err := json.Unmarshal(blobs["index.json"], &index); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	if len(index.Manifests) != 1 {
		return nil, fmt.Errorf("index.json lists %d manifests, want 1", len(index.Manifests))
	}
	var manifest struct {
		Config struct{ Digest string } `json:"config"`
		Layers []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
			Size      int64  `json:"size"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(blobs[blobPath(index.Manifests[0].Digest)], &manifest); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	img := &ociImage{files: map[string]string{}}
	var config struct {
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(blobs[blobPath(manifest.Config.Digest)], &config); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := json.Unmarshal(config.Config, &img.config); err != nil {
		return nil, fmt.Errorf("config.config: %w", err)
	}
	for _, l := range manifest.Layers {
		raw, ok := blobs[blobPath(l.Digest)]
		if !ok {
			return nil, fmt.Errorf("layer %s is not in the archive", l.Digest)
		}
		img.layerBytes += int64(len(raw))
		var r io.Reader = strings.NewReader(string(raw))
		switch {
		case strings.HasSuffix(l.MediaType, "+gzip"):
			if r, err = gzip.NewReader(r); err != nil {
				return nil, fmt.Errorf("layer %s: %w", l.Digest, err)
			}
		case strings.HasSuffix(l.MediaType, ".tar"):
		default:
			return nil, fmt.Errorf("layer %s: media type %s is not tar or tar+gzip", l.Digest, l.MediaType)
		}
		if err := listLayer(r, img.files); err != nil {
			return nil, fmt.Errorf("layer %s: %w", l.Digest, err)
		}
	}
	return img, nil
}

func blobPath(digest string) string {
	algo, hex, _ := strings.Cut(digest, ":")
	return path.Join("blobs", algo, hex)
}

// readTar returns every regular file of a tar by its cleaned path.
func readTar(file string) (map[string][]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		out[path.Clean(h.Name)] = b
	}
}

// listLayer adds every entry of a layer tar to files.
func listLayer(r io.Reader, files map[string]string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(path.Clean(h.Name), "/")
		if name == "." {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			files[name] = "dir"
		case tar.TypeReg:
			files[name] = fmt.Sprintf("file %04o %d:%d", h.Mode&0o7777, h.Uid, h.Gid)
		case tar.TypeSymlink, tar.TypeLink:
			files[name] = "link -> " + h.Linkname
		default:
			files[name] = fmt.Sprintf("type %c", h.Typeflag)
		}
		if strings.HasPrefix(path.Base(name), ".wh.") {
			files[name] = "whiteout"
		}
	}
}

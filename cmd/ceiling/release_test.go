//go:build e2e

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestReleaseDryRun runs the release's build step (.github/release/
// build.sh, as release.yml and `make release-dry-run` do) for this
// machine's platform and darwin/arm64: one archive each holding ceiling,
// refserver, README.md and CHANGELOG.md, SHA256SUMS that match the
// archives' bytes, and a ceiling that reports the tag's version.
func TestReleaseDryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release binaries")
	}
	out := t.TempDir()
	host := runtime.GOOS + "/" + runtime.GOARCH
	platforms := []string{host}
	if host != "darwin/arm64" {
		platforms = append(platforms, "darwin/arm64")
	}
	cmd := exec.Command("bash", ".github/release/build.sh", "v0.0.0-test", out)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "PLATFORMS="+strings.Join(platforms, " "))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, b)
	}
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
	if len(lines) != len(platforms) {
		t.Fatalf("SHA256SUMS has %d lines, want %d:\n%s", len(lines), len(platforms), sums)
	}
	for _, line := range lines {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", line)
		}
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(data); hex.EncodeToString(h[:]) != sum {
			t.Errorf("%s: SHA256SUMS says %s, the archive's bytes hash otherwise", name, sum)
		}
		files := untar(t, data, filepath.Join(out, "x", name))
		for _, want := range []string{"ceiling", "refserver", "README.md", "CHANGELOG.md"} {
			if !slices.Contains(files, want) {
				t.Errorf("%s holds %q, not %s", name, files, want)
			}
		}
	}
	bin := filepath.Join(out, "x", "ceiling_0.0.0-test_"+strings.ReplaceAll(host, "/", "_")+".tar.gz", "ceiling")
	v, err := exec.Command(bin, "version").Output()
	if err != nil || strings.TrimSpace(string(v)) != "v0.0.0-test" {
		t.Errorf("ceiling version: %q, %v; want v0.0.0-test", v, err)
	}
	// A version that is no tag is refused before anything builds.
	bad := exec.Command("bash", ".github/release/build.sh", "main", filepath.Join(out, "bad"))
	bad.Dir = "../.."
	if b, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(b), "not a tag") {
		t.Errorf("build.sh main: %v\n%s", err, b)
	}
}

// untar writes a .tar.gz's files (one directory deep) under dir and
// returns their base names.
func untar(t *testing.T, data []byte, dir string) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		base := filepath.Base(h.Name)
		names = append(names, base)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(filepath.Join(dir, base), os.O_CREATE|os.O_WRONLY, os.FileMode(h.Mode)&0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, tr); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

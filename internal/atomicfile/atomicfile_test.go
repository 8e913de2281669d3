package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "new" {
		t.Fatalf("read %q, %v; want new", b, err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	if n := entries(t, dir); len(n) != 1 {
		t.Errorf("left behind: %q", n)
	}
}

func TestAbortLeavesThePath(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(p, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("half"); err != nil {
		t.Fatal(err)
	}
	f.Abort()
	f.Abort() // twice is fine
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("after abort the path holds %q", b)
	}
	if n := entries(t, dir); len(n) != 1 {
		t.Errorf("left behind: %q", n)
	}
	if err := f.Commit(0o644); err == nil {
		t.Error("commit after abort succeeded")
	}
}

// A temporary file made in another directory renames over the path; a
// rename that fails (here: the path's directory is gone) removes it and
// says so.
func TestCreateElsewhere(t *testing.T) {
	tmpDir, dir := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, "out.json")
	f, err := Create(p, tmpDir)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("x")
	if err := f.Commit(0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "x" {
		t.Errorf("read %q", b)
	}
	gone := filepath.Join(dir, "gone", "out.json")
	f, err = Create(gone, tmpDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(0o644); err == nil {
		t.Error("a rename into a missing directory succeeded")
	}
	if n := entries(t, tmpDir); len(n) != 0 {
		t.Errorf("temporary files left in %s: %q", tmpDir, n)
	}
}

// WriteSynced makes its temporary file in the directory it is given and
// leaves none behind, there or beside the path.
func TestWriteSyncedElsewhere(t *testing.T) {
	tmpDir, dir := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, "out.json")
	if err := WriteSynced(p, tmpDir, []byte("whole")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "whole" {
		t.Fatalf("read %q, %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	if n := entries(t, tmpDir); len(n) != 0 {
		t.Errorf("left in %s: %q", tmpDir, n)
	}
	if n := entries(t, dir); len(n) != 1 {
		t.Errorf("left beside the path: %q", n)
	}
}

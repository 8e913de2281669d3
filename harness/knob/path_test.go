package knob

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestLookPathIsExecs: GENERATOR's command is found, or refused, as
// exec.LookPath finds or refuses it, with the same words, for a path, a
// name on $PATH, one that is not, a file without an execute bit, a
// directory, and a name found only through a relative $PATH entry.
func TestLookPathIsExecs(t *testing.T) {
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{"gen": 0o755, "plain": 0o644} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, path := range []string{dir, "/nonexistent" + string(filepath.ListSeparator) + dir, "." + string(filepath.ListSeparator) + "/nonexistent"} {
		t.Setenv("PATH", path)
		for _, name := range []string{"gen", "plain", "adir", "missing", filepath.Join(dir, "gen"), filepath.Join(dir, "plain"), filepath.Join(dir, "adir"), "./gen", "./missing"} {
			want, wantErr := exec.LookPath(name)
			got, err := lookPath(name)
			if got != want || (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
				t.Errorf("PATH=%s: lookPath(%q) = %q, %v; exec.LookPath: %q, %v", path, name, got, err, want, wantErr)
			}
		}
	}
}

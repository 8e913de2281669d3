package outfile

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, ok := range []string{
		filepath.Join(dir, "out.json"),
		filepath.Join(dir, "new", "deeper", "out.json"), // made at the end
		file, // replaced at the end
	} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%s): %v", ok, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("Check created a directory")
	}
	for _, bad := range []string{
		"/proc/x.json",                            // a directory no file can be made in
		filepath.Join(file, "out.json"),           // parent is a file
		filepath.Join(file, "a", "b", "out.json"), // an ancestor is a file
		dir, // a directory
		"",
	} {
		err := Check(bad)
		if err == nil || !strings.HasPrefix(err.Error(), "OUT") {
			t.Errorf("Check(%q) = %v, want an error naming OUT", bad, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".ceiling-out-check-*")); len(left) > 0 {
		t.Errorf("probe files left: %v", left)
	}
}

func TestWriteOrSave(t *testing.T) {
	dir := t.TempDir()
	r := &result.Result{SchemaVersion: result.SchemaVersion, Warnings: []string{"kept"}}
	if err := WriteOrSave(filepath.Join(dir, "ok.json"), r); err != nil {
		t.Fatal(err)
	}
	blocker := filepath.Join(dir, "blocker")
	os.WriteFile(blocker, nil, 0o644)
	out := filepath.Join(blocker, "out.json")
	saved := filepath.Join(dir, "work", "ceiling-result.json")
	err := WriteOrSave(out, r, filepath.Join(blocker, "also-bad.json"), saved)
	var oe *Error
	if !errors.As(err, &oe) || oe.SavedAt != saved || oe.Out != out {
		t.Fatalf("err %v, want an *Error saved at %s", err, saved)
	}
	if !strings.Contains(err.Error(), saved) || !strings.Contains(err.Error(), out) {
		t.Errorf("message %q names neither path", err)
	}
	var back result.Result
	data, _ := os.ReadFile(saved)
	if json.Unmarshal(data, &back) != nil || back.Warnings[0] != "kept" {
		t.Errorf("saved document %s", data)
	}
	err = WriteOrSave(out, r, filepath.Join(blocker, "x.json"))
	if !errors.As(err, &oe) || oe.SavedAt != "" || !strings.Contains(err.Error(), "lost") {
		t.Errorf("nowhere to save: %v", err)
	}
}

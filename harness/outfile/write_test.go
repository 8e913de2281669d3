package outfile

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
)

func TestTempDirFor(t *testing.T) {
	plain := t.TempDir()
	if got := tempDirFor(plain); got != plain {
		t.Errorf("outside a work tree: temp in %s, want beside the result in %s", got, plain)
	}
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(repo, "out", "deep")
	if got := tempDirFor(sub); got != os.TempDir() {
		t.Errorf("inside a work tree: temp in %s, want %s", got, os.TempDir())
	}
}

// TestWriteInGitTree writes over a tracked result in a real git
// repository: the file ends up whole, nothing else appears in the tree,
// and the only change git sees is the result itself.
func TestWriteInGitTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	path := filepath.Join(repo, "benchmark", "published", "ceiling.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte("{\"old\": true}\n"), 0o644)
	git("add", ".")
	git("commit", "-q", "-m", "old result")

	r := &result.Result{SchemaVersion: result.SchemaVersion, Regime: "echo, batch 10, 256 B, 1 server core, 1 generator core", Warnings: []string{}}
	if err := Write(path, r); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var back result.Result
	if err := json.Unmarshal(data, &back); err != nil || back.Regime != r.Regime {
		t.Fatalf("read back %q: %v", data, err)
	}
	if st := strings.TrimSpace(git("status", "--porcelain", "--untracked-files=all")); st != "M benchmark/published/ceiling.json" {
		t.Errorf("git status after the write:\n%s\nwant only the result modified", st)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
}

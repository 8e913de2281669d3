package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// WriteResult writes r as indented JSON to path so that the path only ever
// holds a whole document: the bytes go to a temporary file, which is then
// renamed over path. Inside a git work tree the temporary file is made in
// os.TempDir, never beside path, so a run in flight leaves the tree as it
// was (no truncated tracked file, no stray file, no -dirty git ref); if
// os.TempDir is on another filesystem the finished bytes are copied to a
// hidden file beside path in one go and renamed from there.
func WriteResult(path string, r *Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	return WriteFileAtomic(path, append(data, '\n'))
}

// WriteFileAtomic is WriteResult's mechanism for any bytes.
func WriteFileAtomic(path string, data []byte) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("OUT %s: %w", path, err)
	}
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("OUT %s: %w", path, err)
	}
	tmp, err := writeTemp(tempDirFor(dir), filepath.Base(abs), data)
	if err != nil {
		return fmt.Errorf("OUT %s: %w", path, err)
	}
	if err := os.Rename(tmp, abs); err == nil {
		return nil
	}
	// Another filesystem: copy the finished bytes beside the target, then
	// rename; the copy is a new hidden file, never the tracked one.
	defer os.Remove(tmp)
	near, err := writeTemp(dir, "."+filepath.Base(abs), data)
	if err != nil {
		return fmt.Errorf("OUT %s: %w", path, err)
	}
	if err := os.Rename(near, abs); err != nil {
		os.Remove(near)
		return fmt.Errorf("OUT %s: %w", path, err)
	}
	return nil
}

func writeTemp(dir, base string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, base+".tmp-*")
	if err != nil {
		return "", err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// tempDirFor is where the temporary file for a result in dir is made:
// beside it, unless dir is in a git work tree.
func tempDirFor(dir string) string {
	if InsideGitWorkTree(dir) {
		return os.TempDir()
	}
	return dir
}

// InsideGitWorkTree reports whether dir or one of its parents holds a .git
// entry (a directory, or a file for worktrees and submodules).
func InsideGitWorkTree(dir string) bool {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false
		}
		d = parent
	}
}

package outfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ceiling-bench/ceiling/internal/atomicfile"
	"github.com/ceiling-bench/ceiling/result"
)

// Write writes r as indented JSON to path so that the path only ever
// holds a whole document (WriteFile).
func Write(path string, r *result.Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	return WriteFile(path, append(data, '\n'))
}

// WriteFile is Write's mechanism for any bytes: a synced temporary file
// renamed over path, made in os.TempDir inside a git work tree, else (or
// when that rename fails) beside path.
func WriteFile(path string, data []byte) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("OUT %s: %w", path, err)
	}
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("OUT %s: %w", path, err)
	}
	if tmpDir := tempDirFor(dir); tmpDir != dir {
		if atomicfile.WriteSynced(abs, tmpDir, data) == nil {
			return nil
		}
		// Another filesystem: write the finished bytes beside the
		// target, as a new hidden file, never the tracked one.
	}
	if err := atomicfile.WriteSynced(abs, dir, data); err != nil {
		return fmt.Errorf("OUT %s: %w", path, err)
	}
	return nil
}

// tempDirFor is where the temporary file for a result in dir is made:
// beside it, unless dir is in a git work tree.
func tempDirFor(dir string) string {
	if insideGitWorkTree(dir) {
		return os.TempDir()
	}
	return dir
}

// insideGitWorkTree reports whether dir or one of its parents holds a .git
// entry (a directory, or a file for worktrees and submodules).
func insideGitWorkTree(dir string) bool {
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

// Check checks, before anything boots, that a result can be written to
// path: it is not a directory, and the nearest existing directory on its
// way (its parent, or the ancestor MkdirAll would start from) is a
// directory that takes a new file. It creates nothing that stays. Errors
// name OUT.
func Check(path string) error {
	if path == "" {
		return errors.New("OUT: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("OUT %s: %w", path, err)
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return fmt.Errorf("OUT %s: is a directory", path)
	}
	dir := filepath.Dir(abs)
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("OUT %s: %s is not a directory", path, dir)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("OUT %s: %w", path, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return fmt.Errorf("OUT %s: no existing directory on its path", path)
		}
		dir = parent
	}
	// Writable in fact, not by mode bits: root ignores those, /proc and
	// read-only mounts do not.
	f, err := os.CreateTemp(dir, ".ceiling-out-check-*")
	if err != nil {
		return fmt.Errorf("OUT %s: directory %s is not writable: %w", path, dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// Error is a result that could not be written to OUT. SavedAt is where
// the document was written instead ("" when nowhere could take it).
type Error struct {
	Out     string
	SavedAt string
	Err     error
}

func (e *Error) Error() string {
	if e.SavedAt != "" {
		return fmt.Sprintf("cannot write OUT %s (%v); the result was saved at %s", e.Out, e.Err, e.SavedAt)
	}
	return fmt.Sprintf("cannot write OUT %s (%v), nor anywhere else: the result is lost", e.Out, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// WriteOrSave writes r to out; if that fails it writes it to the first
// of fallbacks that takes it and returns an *Error saying where.
func WriteOrSave(out string, r *result.Result, fallbacks ...string) error {
	err := Write(out, r)
	if err == nil {
		return nil
	}
	var encodeErr *json.UnsupportedValueError
	if errors.As(err, &encodeErr) {
		return err // no path helps a document that cannot be encoded
	}
	for _, fb := range fallbacks {
		if fb == "" {
			continue
		}
		if Write(fb, r) == nil {
			return &Error{Out: out, SavedAt: fb, Err: err}
		}
	}
	return &Error{Out: out, Err: err}
}

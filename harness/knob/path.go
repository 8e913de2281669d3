package knob

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// lookPath is exec.LookPath's answer for GENERATOR's command, and its
// error's words, without linking os/exec: the knobs link nothing that
// starts a process (TestKnobsLinkOnlyWhatDecides). A name with a slash is
// the file itself; any other is the first executable file of that name
// in a $PATH directory, and one found through a relative directory is
// refused, as exec refuses it (exec.ErrDot). Executable means a file
// with an execute bit (exec asks the kernel, with access(2); the two
// differ only for a file whose one execute bit is another user's).
// TestLookPathIsExecs checks it against exec.LookPath.
func lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		if err := executable(name); err != nil {
			return "", pathError(name, err)
		}
		return name, nil
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if executable(p) != nil {
			continue
		}
		if !filepath.IsAbs(p) {
			return p, pathError(name, errors.New("cannot run executable found relative to current directory"))
		}
		return p, nil
	}
	return "", pathError(name, errors.New("executable file not found in $PATH"))
}

// executable is nil for a file (not a directory) with an execute bit.
func executable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case fi.IsDir():
		return errors.New("is a directory")
	case fi.Mode()&0o111 == 0:
		return fs.ErrPermission
	}
	return nil
}

// pathError is exec.Error's text.
func pathError(name string, err error) error { return fmt.Errorf("exec: %q: %w", name, err) }

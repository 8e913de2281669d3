// Package capfile reads the files ceiling is given with a cap on their
// size: a path named by a flag or a variable may be /dev/zero, a FIFO or
// a runaway log, and a read without end holds the CPU and the memory
// until the machine stops it. Every file the CLI reads whole reads
// through Read (or ReadFrom for stdin), with the cap of its kind, and a
// file past it is an error naming what it was (the flag, the variable or
// the file's field) and the cap: bad input, not a hang.
package capfile

import (
	"fmt"
	"io"
	"os"
)

// The caps, by kind of file.
const (
	// Document is a result document or a published history (JSON,
	// JSON Lines): a long history is a few MiB.
	Document = 64 << 20
	// Config is a target file, a scenario file or a calibration
	// document: hand-written, a few KiB.
	Config = 4 << 20
	// Token is a token file: 32 random bytes in base64, a newline.
	Token = 4 << 10
)

// TooLargeError is a file past its cap; the caller names the flag or
// variable that gave the path.
type TooLargeError struct {
	What, Path string // what kind of file ("history"), and where
	Cap        int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %s, the most ceiling reads of a %s (is it the file you meant?)", e.Path, size(e.Cap), e.What)
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Read is the file at path, read whole, or an error: a regular file
// larger than max is refused from its size before it is read; anything
// else (a device, a FIFO) is read to max and refused past it. what is
// the kind of file, for the error ("history", "target file").
func Read(what, path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > max {
		return nil, &TooLargeError{What: what, Path: path, Cap: max}
	}
	return ReadFrom(what, path, f, max)
}

// ReadFrom reads r to its end, or refuses it once it passes max.
func ReadFrom(what, name string, r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &TooLargeError{What: what, Path: name, Cap: max}
	}
	return b, nil
}

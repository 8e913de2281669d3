package supervise

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// tailWindow is how much of the end of a log LogTail reads.
const tailWindow = 64 << 10

// TailLines is how many log lines the typed readiness errors carry.
const TailLines = 20

// LogTail returns the last n lines of the file at path (at most the last
// 64 KiB of it), joined by "\n", without a trailing newline.
func LogTail(path string, n int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("log tail: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("log tail: %w", err)
	}
	off := max(st.Size()-tailWindow, 0)
	b, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil {
		return "", fmt.Errorf("log tail %s: %w", path, err)
	}
	if off > 0 {
		// Drop the partial first line of the window.
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	b = bytes.TrimRight(b, "\n")
	if len(b) == 0 || n <= 0 {
		return "", nil
	}
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n"))), nil
}

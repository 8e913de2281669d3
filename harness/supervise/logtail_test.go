package supervise

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLogTail(t *testing.T) {
	long := strings.Repeat("x", tailWindow) // pushes the first lines out of the window
	tests := []struct {
		name, content string
		n             int
		want          string
	}{
		{"empty", "", 5, ""},
		{"fewer lines than asked", "a\nb\n", 5, "a\nb"},
		{"last n", "a\nb\nc\nd\n", 2, "c\nd"},
		{"no trailing newline", "a\nb\nc", 2, "b\nc"},
		{"blank lines at the end dropped", "a\nb\n\n\n", 1, "b"},
		{"zero lines", "a\n", 0, ""},
		{"beyond the window", "first\n" + long + "\nlast-but-one\nlast\n", 3, "last-but-one\nlast"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.log")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := LogTail(path, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("LogTail(%d) = %q, want %q", tt.n, trim(got), tt.want)
			}
		})
	}
	if _, err := LogTail(filepath.Join(t.TempDir(), "missing.log"), 3); err == nil || !strings.Contains(err.Error(), "missing.log") {
		t.Errorf("missing file: err = %v", err)
	}
}

func trim(s string) string {
	if len(s) > 80 {
		return s[:40] + "..." + s[len(s)-40:]
	}
	return s
}

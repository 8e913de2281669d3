package publish

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAppendSummaryCapped: a job summary never passes GitHub's 1 MiB (a
// hostile result rendered 3-9.5 MB, and GitHub then shows nothing); what
// does not fit is cut at a line's end and says so.
func TestAppendSummaryCapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.md")
	line := strings.Repeat("x", 99) + "\n"
	// Appends that fit are whole.
	if err := AppendSummary(path, "# first"); err != nil {
		t.Fatal(err)
	}
	// One append of 3 MB: cut.
	if err := AppendSummary(path, strings.Repeat(line, 30000)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxSummaryBytes || len(b) < MaxSummaryBytes-len(line)-len(summaryCut) {
		t.Errorf("summary is %d bytes, want at most %d and close to it", len(b), MaxSummaryBytes)
	}
	if !strings.HasPrefix(string(b), "# first\n") || !strings.HasSuffix(string(b), summaryCut) {
		t.Errorf("summary does not keep its start and end with the cut note: %q … %q", b[:20], b[len(b)-120:])
	}
	kept := strings.TrimPrefix(strings.TrimSuffix(string(b), summaryCut), "# first\n")
	if strings.Trim(kept, line) != "" || !strings.HasSuffix(kept, "x") {
		t.Errorf("the kept part is not whole lines (ends %q)", kept[len(kept)-10:])
	}
	// A full file takes nothing more that does not fit.
	if err := AppendSummary(path, strings.Repeat("y", 200)); err != nil {
		t.Fatal(err)
	}
	if c, _ := os.ReadFile(path); len(c) != len(b) {
		t.Errorf("a full summary grew from %d to %d bytes", len(b), len(c))
	}
}

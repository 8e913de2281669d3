package flaghelp

import (
	"flag"
	"strings"
	"testing"
	"time"
)

func TestPrintFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Int("agents", 3, "`N` agents: "+strings.Repeat("a long explanation ", 12))
	fs.Duration("wait", time.Minute, "how long")
	fs.Bool("keep", false, "leave them")
	var b strings.Builder
	PrintFlags(fs, &b)
	out := b.String()
	for _, want := range []string{"  --agents N\n", "  --keep\n      leave them\n", "  --wait DURATION\n      how long (default: 1m0s)\n", "(default: 3)"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > Width || strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --") {
			t.Errorf("line %q: over %d columns or a single dash", line, Width)
		}
	}
}

func TestWrapWords(t *testing.T) {
	got := WrapWords("aa bb cc "+strings.Repeat("x", 12), 8)
	want := []string{"aa bb cc", strings.Repeat("x", 12)}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("WrapWords = %q, want %q", got, want)
	}
}

package result

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"unicode"
)

// WriteProfileDiff prints a differential CPU profile for a terminal: the
// whole servers' CPU per message, the top frames that grew and shrank
// beyond their noise, and where the flame graph is (its path joined to
// dir, the result's directory), or why there is no profile. Function
// names come from a pull request's code: control characters become '?',
// so no name can move the cursor or recolour the terminal.
func WriteProfileDiff(w io.Writer, d *ProfileDiff, top int, dir string) error {
	if d == nil {
		return nil
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	if d.Reason != "" {
		p("why: no CPU profile: %s\n", inert(d.Reason, 400))
		_, err := io.WriteString(w, b.String())
		return err
	}
	if d.Base != nil && d.Head != nil {
		p("why (%s, CPU per message handled, %d and %d profiled points): base %s, head %s (%s)\n", inert(d.Tool, 20),
			len(d.Base.Points), len(d.Head.Points), fmtNs(d.Base.CPUNsPerMessage), fmtNs(d.Head.CPUNsPerMessage), nsDelta(d.Base.CPUNsPerMessage, d.Head.CPUNsPerMessage))
	}
	for _, l := range []struct{ word, verdict string }{{"grew", FrameGrew}, {"shrank", FrameShrank}} {
		fs := d.Listed(l.verdict, top)
		if len(fs) == 0 {
			p("  %-6s none beyond the spread of its points\n", l.word)
		}
		for _, f := range fs {
			p("  %-6s %-22s %s (%s -> %s)\n", l.word, nsDelta(f.BaseNs, f.HeadNs), inert(f.Function, 100), fmtNs(f.BaseNs), fmtNs(f.HeadNs))
		}
	}
	if d.FlamegraphFile != "" {
		p("  flame graph: %s\n", inert(filepath.Join(dir, d.FlamegraphFile), 300))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// inert is s with every control character a '?', cut to n runes.
func inert(s string, n int) string {
	r := []rune(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return '?'
		}
		return r
	}, s))
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return string(r)
}

// fmtNs is CPU time per message.
func fmtNs(ns float64) string {
	switch {
	case math.Abs(ns) >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case math.Abs(ns) >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

// nsDelta is head against base: "+2.11 µs (+19.6%)", or "+2.11 µs (new)".
func nsDelta(base, head float64) string {
	s := fmtNs(head - base)
	if head >= base {
		s = "+" + s
	}
	if base > 0 {
		return fmt.Sprintf("%s (%+.1f%%)", s, 100*(head-base)/base)
	}
	return s + " (new)"
}

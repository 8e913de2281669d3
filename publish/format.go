package publish

import (
	"fmt"
	"strings"
	"time"
)

// formatNs prints a latency with a unit a reader can compare at a glance.
func formatNs(ns int64) string {
	if ns <= 0 {
		return "n/a"
	}
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d >= time.Microsecond:
		return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%d ns", ns)
}

// formatRate prints a throughput with thousands separators, no rounding
// beyond the unit.
func formatRate(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// oneLine flattens a string from a document into one line for a commit
// message or a log.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

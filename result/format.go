package result

import (
	"fmt"
	"time"
)

// FormatRate writes a throughput rounded to a whole message with thousands
// separators. The table and the publisher's Markdown both use it, so a
// figure reads the same everywhere.
func FormatRate(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// FormatLatency writes a latency in the largest unit it reaches; "-" for
// none (a zero-count histogram reports 0, which is no data, not instant).
func FormatLatency(ns int64) string {
	if ns <= 0 {
		return "-"
	}
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.0fus", float64(d)/1e3)
}

// Rate is FormatRate, ">=" when it is a lower bound.
func Rate(v float64, lowerBound bool) string {
	if lowerBound {
		return ">=" + FormatRate(v)
	}
	return FormatRate(v)
}

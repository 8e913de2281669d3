package publish

import (
	"strings"

	"github.com/ceiling-bench/ceiling/result"
)

// formatNs is result.FormatLatency (the sweep table's format, so a figure
// reads the same in both), with the Markdown's "n/a" for no data.
func formatNs(ns int64) string {
	if ns <= 0 {
		return "n/a"
	}
	return result.FormatLatency(ns)
}

// oneLine flattens a string from a document into one line for a commit
// message or a log.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

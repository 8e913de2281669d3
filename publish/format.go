package publish

import (
	"math"
	"strconv"
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

// ---- numbers

// nbsp keeps a figure and its unit together: "+3.0 %" never wraps.
const nbsp = "\u00a0"

// rate is a throughput with thousands separators.
func rate(v float64) string { return result.FormatRate(v) }

// sideText prints one ceiling: throughput, connections, and its marks.
func sideText(s *Side) string {
	switch {
	case s == nil:
		return "not run"
	case !s.Found:
		return "no clean point"
	}
	out := rate(s.ThroughputPerS) + nbsp + "msg/s @" + nbsp + strconv.Itoa(s.Connections) + nbsp + "conns"
	if s.LowerBound {
		out += nbsp + "†"
	}
	if s.AtLadderTop {
		out += nbsp + "↑"
	}
	return out
}

func p99(s *Side) string {
	if s == nil || !s.Found {
		return "n/a"
	}
	return formatNs(s.P99Ns)
}

// signedPct writes a change with its sign (a real minus) and a
// non-breaking space before the unit: "−12.4 %".
func signedPct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return signed(*v) + nbsp + "%"
}

func signed(v float64) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', 1, 64)
	switch {
	case s == "0.0":
		return "±0.0"
	case v < 0:
		return "−" + s
	}
	return "+" + s
}

// ciPct writes an interval of changes: "−15.0 … −9.8 %".
func ciPct(lo, hi float64) string {
	return ciRange(lo, hi) + nbsp + "%"
}

// ciRange is an interval of percentages without the unit, where a column
// header or the change above it says it.
func ciRange(lo, hi float64) string {
	return signed(lo) + nbsp + "…" + nbsp + signed(hi)
}

func pctAbs(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + nbsp + "%" }

func pctOrNone(v *float64) string {
	if v == nil {
		return "none"
	}
	return pctAbs(*v)
}

// confidence writes a confidence level: "95 %".
func confidence(c float64) string {
	return strconv.FormatFloat(c*100, 'f', -1, 64) + nbsp + "%"
}

// pvalue is a p-value as result.FormatP writes it everywhere ("p = 0.008",
// "p < 0.001"), its spaces kept from breaking.
func pvalue(p *float64) string { return strings.ReplaceAll(result.FormatP(p), " ", nbsp) }

// pvalOrNA is result.PCell, for a column headed p: "0.008", "< 0.001".
func pvalOrNA(p *float64) string { return strings.ReplaceAll(result.PCell(p), " ", nbsp) }

// shortRef abbreviates a full commit id; anything else is kept.
func shortRef(ref string) string {
	core := strings.TrimSuffix(ref, "-dirty")
	if len(core) == 40 && strings.Trim(core, "0123456789abcdef") == "" {
		return core[:12] + ref[40:]
	}
	return ref
}

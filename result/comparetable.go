package result

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteComparison prints a two-arm sweep's comparison under the headline:
// the gating verdict in words first, then one row per compared point, then
// what a row cannot hold: each point's p99 and unpaired test, and why a
// point could not conclude or lost repeats, each said once (the sweep's
// last line, OutcomeLine, points here rather than say it again). Nothing
// for a single-arm sweep.
func WriteComparison(w io.Writer, c *Comparison) error {
	if c == nil {
		return nil
	}
	fmt.Fprintf(w, "\ncomparison, head against base: %s\n", ComparedLine(c.Headline, c.Confidence))
	fmt.Fprintf(w, "  gate: %s\n", c.Gate)
	fmt.Fprintf(w, "  method: %s; alpha %s, %d repeats per arm asked\n", c.Method, FormatLevel(c.Alpha), c.Reps)
	// Within TableWidth: the p99's verdict and the unpaired test go on a
	// line of their own under the table.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "batch\tconns\tbase/s\thead/s\tchange\t%.0f%% CI\tp\tpairs\tMDC\t  verdict\n", c.Confidence*100)
	for _, p := range c.Points {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t  %s\n",
			p.Batch, p.Connections, armMedian(p.Base), armMedian(p.Head), pctOr(p.ChangePct),
			ciCell(p.CILowPct, p.CIHighPct), strings.ReplaceAll(PCell(p.PValue), " ", ""), p.NPairs, p.Blocks, mdcText(p.MDCPct), VerdictPhrase(p))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  base/s, head/s: each arm's median; pairs: blocks with both arms clean / blocks run;")
	fmt.Fprintln(w, "  MDC: the smallest change the paired test could have detected (80% power)")
	for _, p := range c.Points {
		fmt.Fprintf(w, "  batch %d: p99 %s; unpaired (Mann-Whitney) %s, which decides nothing\n", p.Batch, p99Words(p), FormatP(p.Unpaired.PValue))
		if m := p.Memory; m != nil {
			fmt.Fprintf(w, "  batch %d: server memory per connection %s (information; FAIL_ON memory gates on it)\n", p.Batch, m.Reason)
		}
	}
	points := c.Points
	if !slices.ContainsFunc(points, func(p ComparedPoint) bool {
		return p.Batch == c.Headline.Batch && p.Connections == c.Headline.Connections
	}) {
		points = append([]ComparedPoint{c.Headline}, points...) // no rung at the headline batch: its reason is said here
	}
	for _, p := range points {
		if p.Verdict == CompareCannotConclude || p.Base.Failed+p.Head.Failed > 0 {
			fmt.Fprintf(w, "  batch %d: %s\n", p.Batch, p.Reason)
		}
		if p.Sensitivity != "" {
			fmt.Fprintf(w, "  batch %d: SENSITIVITY: %s\n", p.Batch, p.Sensitivity)
		}
	}
	return nil
}

// p99Words is a compared point's p99 verdict in words, with its change.
func p99Words(p ComparedPoint) string {
	s := Phrase(p.P99Verdict)
	if p.P99ChangePct != nil {
		s += " (" + pctOr(p.P99ChangePct) + ")"
	}
	return s
}

// mdcText is a minimum detectable change for a table cell.
func mdcText(m *float64) string {
	if m == nil {
		return "none"
	}
	return fmt.Sprintf("±%.1f%%", *m)
}

// ComparedLine is one compared point in words, e.g. "batch 10 at 64
// connections: slower, -12.4% (95% CI -15.0 .. -9.8, p = 0.008, 5 pairs);
// could have detected ±2.5%; p99 within noise (+1.2%)".
func ComparedLine(p ComparedPoint, confidence float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", rungWords(p.Batch, p.Connections, " at"), VerdictPhrase(p))
	if p.ChangePct != nil {
		fmt.Fprintf(&b, ", %s", pctOr(p.ChangePct))
		if p.CILowPct != nil && p.CIHighPct != nil {
			fmt.Fprintf(&b, " (%.0f%% CI %s, %s, %s)", confidence*100, ciText(p.CILowPct, p.CIHighPct), FormatP(p.PValue), plural(p.NPairs, "pair"))
		} else {
			fmt.Fprintf(&b, " (%s, %s)", FormatP(p.PValue), plural(p.NPairs, "pair"))
		}
	} else {
		fmt.Fprintf(&b, " (%s)", plural(p.NPairs, "pair"))
	}
	fmt.Fprintf(&b, "; %s; p99 %s", DetectWords(p.MDCPct), p99Words(p))
	return b.String()
}

// DetectWords says what a test could have detected: "could have
// detected ±2.5%", or that too few clean pairs could detect anything.
func DetectWords(mdc *float64) string {
	if mdc == nil {
		return "too few clean pairs to detect any change"
	}
	return fmt.Sprintf("could have detected ±%.1f%%", *mdc)
}

func armMedian(a ArmStats) string {
	if a.N == 0 {
		return "-"
	}
	return Rate(a.MedianPerS, a.LowerBound)
}

func pctOr(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", *v)
}

// ciCell is an interval for a table cell: ciText without its spaces.
func ciCell(lo, hi *float64) string {
	return strings.ReplaceAll(ciText(lo, hi), " ", "")
}

func ciText(lo, hi *float64) string {
	if lo == nil || hi == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f .. %+.1f", *lo, *hi)
}

// rungWords names a compared point, "batch 10 at 64 connections", or
// "batch 10 (no rung chosen)" when the first pass chose none (connections
// 0): never "at 0 connections".
func rungWords(batch, conns int, sep string) string {
	if conns <= 0 {
		return fmt.Sprintf("batch %d (no rung chosen)", batch)
	}
	return fmt.Sprintf("batch %d%s %d connections", batch, sep, conns)
}

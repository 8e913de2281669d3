package result

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// writeComparison prints a two-arm sweep's comparison under the headline:
// the gating verdict in words first, then one row per compared point.
// Nothing for a single-arm sweep.
func WriteComparison(w io.Writer, c *Comparison) error {
	if c == nil {
		return nil
	}
	fmt.Fprintf(w, "\ncomparison, head against base: %s\n", ComparedLine(c.Headline, c.Confidence))
	fmt.Fprintf(w, "  gate: %s\n", c.Gate)
	fmt.Fprintf(w, "  method: %s; alpha %g, %d repeats per arm asked\n", c.Method, c.Alpha, c.Reps)
	// Within TableWidth: the p99's verdict and the unpaired test go on a
	// line of their own under the table.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "batch\tconns\tbase/s\thead/s\tchange\t%.0f%% CI\tp\tpairs\tMDC\t  verdict\n", c.Confidence*100)
	for _, p := range c.Points {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t  %s\n",
			p.Batch, p.Connections, armMedian(p.Base), armMedian(p.Head), pctOr(p.ChangePct),
			ciCell(p.CILowPct, p.CIHighPct), pPeople(p.PValue), p.NPairs, p.Blocks, mdcText(p.MDCPct), verdictWords(p))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  base/s, head/s: each arm's median; pairs: blocks with both arms clean / blocks run;")
	fmt.Fprintln(w, "  MDC: the smallest change the paired test could have detected (80% power)")
	for _, p := range c.Points {
		p99 := p.P99Verdict
		if p.P99ChangePct != nil {
			p99 += " (" + pctOr(p.P99ChangePct) + ")"
		}
		fmt.Fprintf(w, "  batch %d: p99 %s; unpaired (Mann-Whitney) p = %s, which decides nothing\n", p.Batch, p99, pOr(p.Unpaired.PValue))
		if m := p.Memory; m != nil {
			fmt.Fprintf(w, "  batch %d: server memory per connection %s (information; FAIL_ON memory gates on it)\n", p.Batch, m.Reason)
		}
	}
	for _, p := range c.Points {
		if p.Verdict == CompareCannotConclude || p.Base.Failed+p.Head.Failed > 0 {
			fmt.Fprintf(w, "  batch %d: %s\n", p.Batch, p.Reason)
		}
		if p.Sensitivity != "" {
			fmt.Fprintf(w, "  batch %d: SENSITIVITY: %s\n", p.Batch, p.Sensitivity)
		}
	}
	return nil
}

// mdcText is a minimum detectable change for a table cell.
func mdcText(m *float64) string {
	if m == nil {
		return "none"
	}
	return fmt.Sprintf("±%.1f%%", *m)
}

// ComparedLine is one compared point in words, e.g. "batch 10 at 64
// connections: slower, -12.4% (95% CI -15.0 .. -9.8, p = 0.008, n = 5 + 5);
// p99 within_noise".
func ComparedLine(p ComparedPoint, confidence float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", rungWords(p.Batch, p.Connections, " at"), verdictWords(p))
	if p.ChangePct != nil {
		fmt.Fprintf(&b, ", %s", pctOr(p.ChangePct))
		if p.CILowPct != nil && p.CIHighPct != nil {
			fmt.Fprintf(&b, " (%.0f%% CI %s, p = %s, %s)", confidence*100, ciText(p.CILowPct, p.CIHighPct), pPeople(p.PValue), plural(p.NPairs, "pair"))
		} else {
			fmt.Fprintf(&b, " (p = %s, %s)", pPeople(p.PValue), plural(p.NPairs, "pair"))
		}
	} else {
		fmt.Fprintf(&b, " (%s)", plural(p.NPairs, "pair"))
	}
	if p.MDCPct != nil {
		fmt.Fprintf(&b, "; could have detected ±%.1f%%", *p.MDCPct)
	} else {
		b.WriteString("; too few clean pairs to detect any change")
	}
	fmt.Fprintf(&b, "; p99 %s", p.P99Verdict)
	if p.P99ChangePct != nil {
		fmt.Fprintf(&b, " (%s)", pctOr(p.P99ChangePct))
	}
	return b.String()
}

func verdictWords(p ComparedPoint) string {
	if p.AtLeast {
		return p.Verdict + " (at least)"
	}
	return p.Verdict
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

func pOr(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.3g", *v)
}

// pPeople is a p-value as the comment writes it, for the lines a person
// reads: three decimals, "<0.001" below. (Reasons keep pOr's three
// significant digits: they are part of the document, re-derived when it
// is read.)
func pPeople(v *float64) string {
	switch {
	case v == nil:
		return "-"
	case *v < 0.001:
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", *v)
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

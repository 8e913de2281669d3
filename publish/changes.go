package publish

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ceiling-bench/ceiling/internal/changepoint"
	"github.com/ceiling-bench/ceiling/result"
)

// DefaultMinChangePct is the least change a change point must show where
// no entry of its run knows its A-A noise floor.
const DefaultMinChangePct = 5.0

// Change is a change point along one measure of one series of a history
// (changepoint.Detect): the last entry before it and the first after it
// (the commits between which the change came), the mean of each side's
// segment, the change, Welch's p, and the least change it had to show
// (the A-A floors').
type Change struct {
	Series  string
	Measure string // "headline", or "batch N" for a batch's ceiling
	Before  HistoryEntry
	After   HistoryEntry

	MeanBefore, MeanAfter float64
	NBefore, NAfter       int
	ChangePct             float64
	P                     float64
	MinChangePct          float64
}

// Changes finds the change points of h (oldest first): for each series,
// within each run of one regime (a regime change is a break of its own,
// never a change point), on the headline and on each other batch's
// ceiling (the regime fixes the headline's batch).
// Lower bounds, partial runs and batches without a clean point are left
// out of the values (a lower bound is not a point). The least change a
// change point must show is the median of the run's A-A noise floors
// (DefaultMinChangePct where none is known), and the median of each
// side's own: a side whose entries' repeats disowned them (a run of
// high draws, each with a floor of 12%) is no level to change from. Changes come by series, then
// by measure, then in order.
func Changes(h []HistoryEntry) []Change {
	var out []Change
	for _, series := range TrendSeries(Trend(h)) {
		for _, run := range regimeRuns(series) {
			minPct := medianFloor(run)
			o := changepoint.Defaults
			o.MinMagnitude = minPct / 100
			batches := []int{0} // 0: the headline, then each other batch
			for _, b := range TrendBatches(run) {
				if b != run[0].Batch { // the headline is its batch's ceiling
					batches = append(batches, b)
				}
			}
			for _, batch := range batches {
				xs, at := valuesOf(run, batch)
				floors := make([]float64, len(xs))
				for k, i := range at {
					if f := run[i].NoiseFloorPct; f != nil {
						floors[k] = *f / 100
					}
				}
				measure := "headline"
				if batch != 0 {
					measure = fmt.Sprintf("batch %d", batch)
				}
				for _, cp := range changepoint.DetectFloored(xs, floors, o) {
					out = append(out, Change{
						Series: run[0].Series(), Measure: measure,
						Before: run[at[cp.Index-1]].HistoryEntry, After: run[at[cp.Index]].HistoryEntry,
						MeanBefore: cp.MeanBefore, MeanAfter: cp.MeanAfter, NBefore: cp.NBefore, NAfter: cp.NAfter,
						ChangePct: cp.Change * 100, P: cp.P, MinChangePct: cp.MinMagnitude * 100,
					})
				}
			}
		}
	}
	return out
}

// regimeRuns splits one series' rows where its regime changed.
func regimeRuns(rows []TrendRow) [][]TrendRow {
	var runs [][]TrendRow
	for i, r := range rows {
		if i == 0 || r.RegimeChanged {
			runs = append(runs, nil)
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], r)
	}
	return runs
}

// valuesOf is batch's ceiling along run (0: the headline), the values
// that are points (no lower bound, no partial run, a clean point found),
// and the row of each.
func valuesOf(run []TrendRow, batch int) (xs []float64, at []int) {
	for i, r := range run {
		if r.Partial {
			continue
		}
		v, lower, ok := r.ThroughputPerS, r.LowerBound, true
		if batch != 0 {
			c, has := r.Ceiling(batch)
			v, lower, ok = c.ThroughputPerS, c.LowerBound, has && c.Found
		}
		if !ok || lower || !(v > 0) {
			continue
		}
		xs = append(xs, v)
		at = append(at, i)
	}
	return xs, at
}

// MinChangePct is the least change (%) Changes asks of a change point
// along entries of one run: the median of their known A-A noise floors,
// or DefaultMinChangePct.
func MinChangePct(entries []HistoryEntry) float64 { return medianFloor(Trend(entries)) }

// medianFloor is the median A-A noise floor (%) of run's entries that
// know theirs, or DefaultMinChangePct.
func medianFloor(run []TrendRow) float64 {
	var fs []float64
	for _, r := range run {
		if f := r.NoiseFloorPct; f != nil && *f > 0 {
			fs = append(fs, *f)
		}
	}
	if len(fs) == 0 {
		return DefaultMinChangePct
	}
	slices.Sort(fs)
	n := len(fs)
	return (fs[(n-1)/2] + fs[n/2]) / 2
}

// WriteChanges prints the change points of a history for a terminal
// (within 100 columns): one line each, with the commits it lies between;
// or that there is none, and what was looked at.
func WriteChanges(w io.Writer, h []HistoryEntry, cs []Change) error {
	var b strings.Builder
	method := fmt.Sprintf("E-divisive means, Welch's t-test p < %g, beyond the A-A floor", changepoint.Defaults.MaxP)
	switch len(cs) {
	case 0:
		fmt.Fprintf(&b, "no change point in %d entries (%s)\n", len(h), method)
	case 1:
		fmt.Fprintf(&b, "1 change point in %d entries (%s):\n\n", len(h), method)
	default:
		fmt.Fprintf(&b, "%d change points in %d entries (%s):\n\n", len(cs), len(h), method)
	}
	if len(cs) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "series\tmeasure\tbetween\tbefore\tafter\tchange\tp")
		for _, c := range cs {
			fmt.Fprintf(tw, "%s\t%s\t%s..%s\t%s (%d)\t%s (%d)\t%+.1f%%\t%.1g\n", c.Series, c.Measure,
				shortRef(c.Before.GitRef), shortRef(c.After.GitRef),
				result.FormatRate(c.MeanBefore), c.NBefore, result.FormatRate(c.MeanAfter), c.NAfter, c.ChangePct, c.P)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		b.WriteString("\nbetween: the last commit before the change and the first after it; before, after:\n")
		b.WriteString("the mean of each side's entries (how many; lower bounds left out).\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

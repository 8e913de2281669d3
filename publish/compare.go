package publish

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ceiling-bench/ceiling/harness"
)

// Row verdicts of a comparison.
const (
	Same           = "~"               // the change is inside the noise floor
	Faster         = "faster"          // head above base by more than the floor
	Slower         = "slower"          // head below base by more than the floor
	CannotConclude = "cannot conclude" // see Row.Reason
	HeadOnly       = "head only"       // no baseline to compare with
)

// Side is one run's ceiling at one batch size.
type Side struct {
	Found          bool // a clean point exists at this batch
	ThroughputPerS float64
	P99Ns          int64
	Connections    int
	LowerBound     bool // generator-capped: the server's ceiling is at least this
	Verdict        string
	AtLadderTop    bool
}

// Row compares one batch size (or the headline).
type Row struct {
	Batch      int
	Base, Head *Side // nil: the run has no such batch
	DeltaPct   *float64
	Verdict    string
	Reason     string // why it cannot conclude, or what the verdict rests on
}

// CompareOptions say where the baseline came from.
type CompareOptions struct {
	// MergeBase is the pull request's merge-base commit, when known. A
	// baseline measured elsewhere is reported as a fallback.
	MergeBase string
	// BaseMissing explains a missing baseline (base == nil).
	BaseMissing string
	// BaseSource describes where the baseline was read from, e.g.
	// "benchmark/published/ceiling-load.json on main".
	BaseSource string
}

// Comparison is everything the comment shows, decided; Render only formats.
type Comparison struct {
	Generator string
	Base      *harness.Result // nil: no baseline
	Head      *harness.Result

	// FloorPct is the noise floor the verdicts use: the larger of the two
	// runs' A-A floors. Nil when either run has none (or, with no baseline,
	// the head's own floor is in Head.NoiseFloorPct).
	FloorPct *float64

	Headline Row
	Rows     []Row // by batch size, ascending

	Alerts    []string // runs with errors or failed points: shown first
	Warnings  []Warning
	Footnotes []Note
}

// Note is a sentence of ours with untrusted values in it: Render escapes
// Args (and only Args) into the %s verbs of Format.
type Note struct {
	Format string
	Args   []string
}

func note(format string, args ...string) Note { return Note{Format: format, Args: args} }

// Warning is one warning from one run.
type Warning struct {
	Run  string // "base" | "head" | "comparison"
	Text string
}

// Compare decides the comparison of head against base (nil: no baseline).
func Compare(base, head *harness.Result, opts CompareOptions) *Comparison {
	c := &Comparison{Generator: head.Meta.Generator, Base: base, Head: head}
	if base != nil {
		switch {
		case base.NoiseFloorPct != nil && head.NoiseFloorPct != nil:
			f := math.Max(*base.NoiseFloorPct, *head.NoiseFloorPct)
			c.FloorPct = &f
		}
	}

	c.Headline = c.row(headlineSide(base), headlineSide(head))
	c.Headline.Batch = head.Headline.Batch
	if base != nil && base.Headline.Clean && head.Headline.Clean && base.Headline.Batch != head.Headline.Batch {
		c.Headline.DeltaPct = nil
		c.Headline.Verdict, c.Headline.Reason = CannotConclude,
			fmt.Sprintf("the headline batch changed (base %d, head %d)", base.Headline.Batch, head.Headline.Batch)
	}

	var batches []int
	for _, r := range []*harness.Result{base, head} {
		if r != nil {
			batches = append(batches, r.Config.BatchLadder...)
		}
	}
	slices.Sort(batches)
	for _, b := range slices.Compact(batches) {
		row := c.row(ceilingSide(base, b), ceilingSide(head, b))
		row.Batch = b
		c.Rows = append(c.Rows, row)
	}

	for _, run := range []struct {
		name string
		r    *harness.Result
	}{{"base", base}, {"head", head}} {
		if run.r == nil {
			continue
		}
		if run.r.Partial {
			c.Alerts = append(c.Alerts, fmt.Sprintf("%s run: the sweep was interrupted; only the %d points that finished are here.", run.name, len(run.r.Curve)))
		}
		bad, unclean, n := troubled(run.r)
		if bad > 0 {
			c.Alerts = append(c.Alerts, fmt.Sprintf("%s run: %d of %d points had errors or failed; a figure taken with errors measures the failure, not the server.", run.name, bad, n))
		}
		if unclean > 0 {
			c.Alerts = append(c.Alerts, fmt.Sprintf("%s run: %d more points had no errors but were not clean (saturated, short of connections, lost some or measured nothing); they are not ceilings.", run.name, unclean))
		}
		for _, w := range run.r.Warnings {
			c.Warnings = append(c.Warnings, Warning{Run: run.name, Text: w})
		}
	}
	c.Footnotes = footnotes(base, head, opts)
	return c
}

func (c *Comparison) row(base, head *Side) Row {
	row := Row{Base: base, Head: head}
	switch {
	case c.Base == nil:
		row.Verdict, row.Reason = HeadOnly, "no baseline"
		return row
	case base == nil || head == nil:
		row.Verdict, row.Reason = CannotConclude, "batch size measured in one run only"
		return row
	case !base.Found || !head.Found:
		row.Verdict, row.Reason = CannotConclude, "no clean point in "+which(!base.Found, !head.Found)
		return row
	}
	d := (head.ThroughputPerS - base.ThroughputPerS) / base.ThroughputPerS * 100
	row.DeltaPct = &d
	switch {
	case base.LowerBound || head.LowerBound:
		row.Verdict, row.Reason = CannotConclude, which(base.LowerBound, head.LowerBound)+" generator-capped (a lower bound)"
	case c.FloorPct == nil:
		row.Verdict, row.Reason = CannotConclude, "no A-A noise floor in "+which(c.Base.NoiseFloorPct == nil, c.Head.NoiseFloorPct == nil)
	case math.Abs(d) <= *c.FloorPct:
		row.Verdict, row.Reason = Same, "within noise"
	case d > 0:
		row.Verdict = Faster
	default:
		row.Verdict = Slower
	}
	return row
}

func which(base, head bool) string {
	switch {
	case base && head:
		return "base and head"
	case base:
		return "base"
	}
	return "head"
}

func headlineSide(r *harness.Result) *Side {
	if r == nil {
		return nil
	}
	h := r.Headline
	return &Side{Found: h.Clean, ThroughputPerS: h.ThroughputPerS, P99Ns: h.LatencyNs.P99,
		Connections: h.Connections, LowerBound: h.LowerBound, Verdict: h.Verdict}
}

func ceilingSide(r *harness.Result, batch int) *Side {
	if r == nil || !slices.Contains(r.Config.BatchLadder, batch) {
		return nil
	}
	for _, c := range r.Ceilings {
		if c.Batch == batch {
			return &Side{Found: c.Found, ThroughputPerS: c.ThroughputPerS, P99Ns: c.LatencyNs.P99,
				Connections: c.Connections, LowerBound: c.LowerBound, Verdict: c.Verdict, AtLadderTop: c.AtLadderTop}
		}
	}
	return &Side{} // in the ladder, no ceiling reported: nothing clean
}

// troubled counts points with errors or a failed status, and the others
// that are not clean.
func troubled(r *harness.Result) (bad, unclean, total int) {
	for _, p := range r.Curve {
		switch {
		case p.Errors > 0 || p.Status != harness.StatusOK:
			bad++
		case !p.Clean:
			unclean++
		}
	}
	return bad, unclean, len(r.Curve)
}

func footnotes(base, head *harness.Result, opts CompareOptions) []Note {
	var out []Note
	if base == nil {
		why := opts.BaseMissing
		if why == "" {
			why = "no baseline result was given"
		}
		return append(out, note("No baseline: %s. The head run is shown alone; nothing is compared.", why))
	}
	if opts.BaseSource != "" {
		out = append(out, note("Baseline read from %s.", opts.BaseSource))
	}
	if mb := opts.MergeBase; mb != "" && !sameCommit(base.Meta.GitRef, mb) {
		out = append(out, note("The baseline was measured at %s, not at the merge-base %s (no result for it): it fell back to the latest published result, so changes between the two are part of the difference.", base.Meta.GitRef, mb))
	}
	for _, r := range []struct {
		name string
		res  *harness.Result
	}{{"baseline", base}, {"head", head}} {
		if strings.HasSuffix(r.res.Meta.GitRef, "-dirty") {
			out = append(out, note("The "+r.name+" was measured from a tree with uncommitted changes (%s).", r.res.Meta.GitRef))
		}
		if r.res.Config.Quick {
			out = append(out, note("The "+r.name+" run used the quick ladder."))
		}
	}
	if base.Regime != head.Regime {
		out = append(out, note("The two runs' regimes differ (base: %s; head: %s): the figures are not like for like.", base.Regime, head.Regime))
	}
	if bh, hh := base.Meta.Hardware, head.Meta.Hardware; bh.CPUModel != hh.CPUModel || bh.LogicalCPUs != hh.LogicalCPUs {
		out = append(out, note("The runs ran on different machines (base: %s; head: %s): runner variance is part of the difference.",
			fmt.Sprintf("%s, %d CPUs", bh.CPUModel, bh.LogicalCPUs), fmt.Sprintf("%s, %d CPUs", hh.CPUModel, hh.LogicalCPUs)))
	}
	return out
}

// sameCommit compares a recorded git ref with a commit id, either possibly
// abbreviated.
func sameCommit(ref, commit string) bool {
	ref = strings.TrimSuffix(ref, "-dirty")
	if len(ref) < 7 || len(commit) < 7 {
		return ref == commit
	}
	return strings.HasPrefix(ref, commit) || strings.HasPrefix(commit, ref)
}

package result

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// NoiseFloorPct is the A-A noise floor: how far the repeat of the headline
// peak moved from it, in percent of the peak. Nil when either run has no
// throughput to compare.
func NoiseFloorPct(peak, repeat float64) *float64 {
	if peak <= 0 || repeat <= 0 {
		return nil
	}
	v := math.Abs(repeat-peak) / peak * 100
	return &v
}

// Regime names what a headline describes, e.g. "echo, batch 10, 256 B,
// 3 server cores, 1 generator core".
func Regime(scenario string, batch, recordSize, serverCores, generatorCores int) string {
	return fmt.Sprintf("%s, batch %d, %d B, %s, %s", scenario, batch, recordSize,
		plural(serverCores, "server core"), plural(generatorCores, "generator core"))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Summarize derives the ceilings, the headline and the noise floor from the
// curve, and adds the warnings they call for. It is idempotent and works on
// a partial curve (an interrupted sweep). In a two-arm sweep the ceilings,
// headline and noise floor are the head arm's, and the comparison is
// derived too (DecideComparison).
func (r *Result) Summarize() {
	// Drop what an earlier call derived, so a call on a longer curve
	// replaces its warnings instead of adding stale ones.
	kept := r.Warnings[:0]
	for _, w := range r.Warnings {
		if !slices.ContainsFunc(derivedWarnings, func(p string) bool { return strings.HasPrefix(w, p) }) {
			kept = append(kept, w)
		}
	}
	r.Warnings = kept
	r.Meta.ClientIO = ClientIO(r.Curve)
	r.flagNearCap()
	r.Ceilings = r.Ceilings[:0]
	for _, b := range r.Config.BatchLadder {
		r.Ceilings = append(r.Ceilings, r.ceiling(b))
	}
	for _, c := range r.Ceilings {
		if c.AtLadderTop {
			r.Warn(fmt.Sprintf("batch %d peaked at the top of its connection ladder (%d connections): widen CONNS_LADDER_%d, the knee may lie beyond it",
				c.Batch, c.Connections, c.Batch))
		}
		if !c.Found && r.ran(c.Batch) {
			if r.Config.Objective != "" && r.anyClean(c.Batch) {
				r.Warn(fmt.Sprintf("batch %d has no clean point that meets the objective (%s)", c.Batch, r.Config.Objective))
			} else {
				r.Warn(fmt.Sprintf("batch %d has no clean point (every point failed, had errors, was saturated or was contended)", c.Batch))
			}
		}
	}

	contended := 0
	for _, p := range r.Curve {
		if p.Status == StatusOK && p.Contended {
			contended++
		}
	}
	if contended > 0 {
		who := "other processes ran on them"
		if c := Contenders(r.Curve); c != "" {
			who = c
		}
		r.Warn(fmt.Sprintf("contended: in %d of %d points the pinned CPUs were shared with other work (%s): the machine was not quiet, those points are not clean and none is a ceiling", contended, len(r.Curve), who))
	}

	r.Headline = Headline{Batch: r.Config.HeadlineBatch}
	for _, c := range r.Ceilings {
		if c.Batch == r.Config.HeadlineBatch && c.Found {
			r.Headline = Headline{
				Clean:          true,
				ThroughputPerS: c.ThroughputPerS,
				Batch:          c.Batch,
				Connections:    c.Connections,
				LatencyNs:      c.LatencyNs,
				Verdict:        c.Verdict,
				LowerBound:     c.LowerBound,
			}
		}
	}
	if r.Headline.LowerBound {
		r.Warn("the headline is a lower bound: the generator capped it, not the server")
	}

	r.NoiseFloorPct = nil
	for _, p := range r.Curve {
		if p.Role != RoleAARepeat {
			continue
		}
		// Only a clean repeat measures noise: one with errors, saturated
		// or short of connections measures its own trouble.
		if p.Clean && r.Headline.Clean && p.Batch == r.Headline.Batch && p.Connections == r.Headline.Connections {
			r.NoiseFloorPct = NoiseFloorPct(r.Headline.ThroughputPerS, p.ThroughputPerS)
		}
		if r.NoiseFloorPct == nil {
			why := p.FailReason
			switch {
			case why != "":
			case p.Status == StatusOK && p.Errors > 0:
				why = fmt.Sprintf("it had %d errors", p.Errors)
			case p.Status == StatusOK && p.Contended:
				why = "it was contended: its pinned CPUs were shared with other work"
			case p.Status == StatusOK && p.ThroughputPerS > 0:
				why = "it was not clean (saturated, or connections short or dropped)"
			default:
				why = "it measured no throughput"
			}
			r.Warn(fmt.Sprintf("the A-A repeat of the headline failed (%s): no noise floor", why))
		}
	}
	var cg string
	if r.HeadroomProbe != nil {
		cg = r.HeadroomProbe.Cgroup // set by the runner, kept across calls
	}
	r.HeadroomProbe = headroomOf(r, r.Config.HeadroomProbeFraction)
	if r.HeadroomProbe != nil {
		r.HeadroomProbe.Cgroup = cg
	}
	if !r.Headline.Clean && !r.Partial && r.ran(r.Config.HeadlineBatch) {
		r.Warn(fmt.Sprintf("no A-A repeat: batch %d has no clean point to repeat", r.Config.HeadlineBatch))
	}
	var profiled *ProfileDiff // measured, not derived from the curve: kept
	if r.Comparison != nil {
		profiled = r.Comparison.Headline.ProfileDiff
	}
	r.Comparison = ComparisonOf(r)
	if r.Comparison != nil {
		r.Comparison.Headline.ProfileDiff = profiled
		if r.Arms != nil {
			// A document from before Arms keeps its first-pass headline.
			r.headlineFromBlocks()
		}
	}
	r.ConnectionCeiling = r.connectionCeiling()
}

// ComparisonOf is r's comparison as its curve and its blocks' ends give
// it: DecideComparison over the curve, each compared point with why its
// blocks stopped (r.Ended).
func ComparisonOf(r *Result) *Comparison {
	c := DecideComparison(r.Curve, r.Config)
	if c != nil {
		c.attachEnded(r.Ended)
	}
	return c
}

// attachEnded gives each compared point why its blocks stopped; a
// headline that was never compared gets the run's reason (connections
// 0), or its rung's when the first pass found one but no block ran there
// (a budget that could not buy the blocks).
func (c *Comparison) attachEnded(ended []EndedAt) {
	// find is the end recorded at (batch, conns). For conns 0 (a
	// headline never compared) with none there, it is the first end
	// recorded at any rung of the batch.
	find := func(batch, conns int) *Ended {
		var atBatch *Ended
		for _, e := range ended {
			if e.Batch != batch {
				continue
			}
			if e.Connections == conns {
				return &e.Ended
			}
			if conns == 0 && atBatch == nil {
				atBatch = &e.Ended
			}
		}
		return atBatch
	}
	for i := range c.Points {
		c.Points[i].Ended = find(c.Points[i].Batch, c.Points[i].Connections)
	}
	c.Headline.Ended = find(c.Headline.Batch, c.Headline.Connections)
	if c.Headline.Ended != nil && c.Headline.Connections == 0 {
		c.Headline.Reason = "cannot conclude: " + c.Headline.Ended.Text
	}
}

// headlineFromBlocks makes a two-arm sweep's headline the head's median
// clean compare repeat at the compared rung (the lower of the middle
// two), whole: every figure one point's. A first-pass point is one short
// window; the blocks are many.
func (r *Result) headlineFromBlocks() {
	h := r.Comparison.Headline
	var reps []Point
	for _, p := range r.Curve {
		if p.Role == RoleCompare && p.Arm == ArmHead && p.Batch == h.Batch && p.Connections == h.Connections && CleanRepeat(&p) {
			reps = append(reps, p)
		}
	}
	if len(reps) == 0 {
		return
	}
	slices.SortStableFunc(reps, func(a, b Point) int { return cmp.Compare(a.ThroughputPerS, b.ThroughputPerS) })
	m := reps[(len(reps)-1)/2]
	r.Headline = Headline{Clean: true, ThroughputPerS: m.ThroughputPerS, Batch: m.Batch, Connections: m.Connections,
		LatencyNs: m.LatencyNs, Verdict: m.Verdict, LowerBound: m.LowerBound, Repeats: len(reps)}
}

// derivedWarnings are the openings of the warnings Summarize derives.
var derivedWarnings = []string{"batch ", "the headline is a lower bound", "contended: ", "no A-A repeat", "the A-A repeat", NearCapMark, "calibration: "}

// ceiling is one batch's highest clean sweep point (the A-A repeat measures
// noise and is not a candidate).
func (r *Result) ceiling(batch int) BatchCeiling {
	c := BatchCeiling{Batch: batch}
	for _, p := range r.Curve {
		if p.Role != RoleSweep || p.Arm == ArmBase || p.Batch != batch || !p.Clean {
			continue
		}
		if r.Config.Objective != "" && (p.Objective == nil || !p.Objective.Met) {
			continue
		}
		// With an objective the ceiling is the most load that meets it;
		// without, the highest throughput (on a tie, the fewer
		// connections, whatever order the points ran in).
		better := p.ThroughputPerS > c.ThroughputPerS || p.ThroughputPerS == c.ThroughputPerS && p.Connections < c.Connections
		if r.Config.Objective != "" {
			better = p.Connections > c.Connections || p.Connections == c.Connections && better
		}
		if !c.Found || better {
			c = BatchCeiling{
				Batch:          batch,
				Found:          true,
				ThroughputPerS: p.ThroughputPerS,
				Connections:    p.Connections,
				LatencyNs:      p.LatencyNs,
				Verdict:        p.Verdict,
				LowerBound:     p.LowerBound,
			}
		}
	}
	// At the top of a ladder it climbed: a batch measured at one rung
	// (a one-rung ladder, or a two-arm sweep's batch run once at the rung
	// the headline's search found) has no knee to miss, and "widen its
	// ladder" would be advice about a ladder it never climbed.
	if lad := r.Config.ConnsLadders[strconv.Itoa(batch)]; c.Found && len(lad) > 0 && r.rungs(batch) > 1 {
		c.AtLadderTop = c.Connections == lad[len(lad)-1]
	}
	return c
}

// rungs is how many connection counts the (head's) sweep points of batch
// measured.
func (r *Result) rungs(batch int) int {
	var seen []int
	for _, p := range r.Curve {
		if p.Role == RoleSweep && p.Arm != ArmBase && p.Batch == batch && !slices.Contains(seen, p.Connections) {
			seen = append(seen, p.Connections)
		}
	}
	return len(seen)
}

func (r *Result) anyClean(batch int) bool {
	for _, p := range r.Curve {
		if p.Batch == batch && p.Arm != ArmBase && p.Role == RoleSweep && p.Clean {
			return true
		}
	}
	return false
}

func (r *Result) ran(batch int) bool {
	for _, p := range r.Curve {
		if p.Batch == batch && p.Arm != ArmBase {
			return true
		}
	}
	return false
}

func (r *Result) Warn(w string) {
	for _, have := range r.Warnings {
		if have == w {
			return
		}
	}
	r.Warnings = append(r.Warnings, w)
}

// ClientIO is the generator's own account of its client pattern over a
// curve (Meta.ClientIO): each distinct "engine, io_pattern" in the order
// first met, joined by "; ". A point that reported neither adds nothing.
func ClientIO(curve []Point) string {
	var seen []string
	for _, p := range curve {
		var parts []string
		for _, v := range []string{p.Generator.Engine, p.Generator.IOPattern} {
			if v != "" {
				parts = append(parts, v)
			}
		}
		if s := strings.Join(parts, ", "); s != "" && !slices.Contains(seen, s) {
			seen = append(seen, s)
		}
	}
	return strings.Join(seen, "; ")
}

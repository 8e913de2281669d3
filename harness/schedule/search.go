package schedule

import (
	"fmt"
	"math"
	"slices"
)

// Adaptive search (SEARCH=bisect).
//
// The ladder sweep runs every rung of every batch's connection ladder. The
// search runs fewer points between the same ladder's lowest and highest
// rung and keeps every rule of the ladder: a point is measured, judged and
// recorded exactly as a ladder point is, and the ceilings are derived from
// the curve by the same Summarize (clean points only, lower bounds kept,
// the objective's "most connections that meet it"). Only the choice of
// which connection counts to measure changes, and every point it ran is in
// the curve with its step, phase and the reason it was chosen
// (Point.SearchStep, SearchPhase, SearchReason), so the result shows the
// search path and nothing is interpolated.
//
// The search assumes what closed-loop throughput does as connections grow:
// it rises, then flattens or falls. Per batch (and per rep):
//
//  1. Bracket: from the ladder's lowest rung, multiply connections by
//     BracketFactor (capped at the top rung) while each point improves on
//     the best so far by more than half the tolerance (with an objective:
//     while it meets it). The first point that does not ends the bracket.
//     A point that failed outright (no measurement) says nothing about the
//     server: the bracket steps past it.
//  2. Bisect: around the best point so far, probe the geometric midpoint
//     of the wider open gap to a measured neighbour, until the neighbours
//     show a plateau (the point above the best, or below it when nothing
//     above was measured, within the tolerance of it), the gaps are within
//     ±tolerance (ratio 1 + 2*tolerance), or the budget (SearchBudget: at
//     most a third of the ladder's rungs) is spent. The gap below the best is open only if the
//     per-connection throughput fell across it: where it did not, the
//     curve was still rising linearly there and holds no peak. With an
//     objective the search bisects between the most connections that met
//     it and the fewest above them that did not.
//
// Batches are interleaved as in the ladder sweep (one step of each
// unfinished batch in turn), reps are the outer loop, and the A-A repeat
// of the headline follows as usual.

// Search phases (Point.SearchPhase).
const (
	PhaseBracket = "bracket"
	PhaseBisect  = "bisect"
)

const (
	// SearchTolerance is the search's target: its ceiling within ±5% of
	// what the full ladder would find.
	SearchTolerance = 0.05
	// BracketFactor multiplies connections between bracket points: two
	// doublings per step, since the range is bounded by the ladder and
	// the bisection that follows halves a gap in log space per point.
	BracketFactor = 4
	// BisectPoints is how many points the bisection may add to the
	// bracket: from a gap of BracketFactor (4x), four halvings in log
	// space reach a ratio under 1 + 2*SearchTolerance.
	BisectPoints = 4
)

// SearchBudget is the most points the search runs for one batch (per
// rep): the bracket's points from the lowest rung to the top one, plus
// BisectPoints, but never more than a third of the ladder's rungs (the
// goal) unless the bracket alone needs more. A coarse ladder (the
// default five rungs) thus gets its bracket only.
func SearchBudget(l []int) int {
	if len(l) == 0 {
		return 0
	}
	bracket := len(bracketRungs(l[0], top(l)))
	return max(bracket, min(bracket+BisectPoints, len(l)/3))
}

func bracketRungs(lo, hi int) []int {
	r := []int{lo}
	for c := lo; c < hi; {
		c = min(c*BracketFactor, hi)
		r = append(r, c)
	}
	return r
}

// probe is one point of a search as the search reads it.
type probe struct {
	conns  int
	thr    float64
	failed bool // no measurement at all: says nothing about the server
	good   bool // measured without errors, every connection, objective met
}

// searcher plans one batch's search (one rep). It is pure bookkeeping:
// Next says what to measure, Record what it gave.
type searcher struct {
	batch, rep int
	lo, hi     int
	objective  bool
	budget     int
	probes     []probe // in the order run
	bracketing bool
	end        string // set when the search is over: how it ended
	// rungs, when set, are the only counts the search may measure (the
	// ladder's): a bracket step or a midpoint is the rung nearest it, so
	// that the rung it ends on is one every run can reach.
	rungs []int
}

func newSearcher(batch, rep int, l []int, objective bool) *searcher {
	return &searcher{batch: batch, rep: rep, lo: l[0], hi: top(l), objective: objective,
		budget: SearchBudget(l), bracketing: true}
}

// newRungSearcher is a search that measures only the ladder's rungs
// (COMPARE_SCOPE=headline's first pass: two pull requests' runs must be
// able to end on the same rung). Its budget is the ladder.
func newRungSearcher(batch int, l []int) *searcher {
	s := newSearcher(batch, 0, l, false)
	s.rungs, s.budget = slices.Clone(l), len(l)
	slices.Sort(s.rungs)
	return s
}

// Record adds a measured point.
func (s *searcher) Record(p probe) { s.probes = append(s.probes, p) }

// measured reports whether conns was run already.
func (s *searcher) measured(c int) bool {
	return slices.ContainsFunc(s.probes, func(p probe) bool { return p.conns == c })
}

// Next is the next point's connections, its phase and why it was chosen;
// ok false: the search is over (why says how it ended).
func (s *searcher) Next() (conns int, phase, why string, ok bool) {
	if s.end == "" {
		conns, phase, why, ok = s.next()
		if ok {
			return conns, phase, why, true
		}
		s.end = why
	}
	return 0, "", s.end, false
}

func (s *searcher) next() (conns int, phase, why string, ok bool) {
	if len(s.probes) == 0 {
		return s.lo, PhaseBracket, "the ladder's lowest rung", true
	}
	if len(s.probes) >= s.budget {
		return 0, "", fmt.Sprintf("budget of %d points spent", s.budget), false
	}
	if s.bracketing {
		c, why, more := s.bracketNext()
		if more {
			return c, PhaseBracket, why, true
		}
		s.bracketing = false
		if c < 0 {
			return 0, "", why, false
		}
	}
	if s.objective {
		return s.bisectObjective()
	}
	return s.bisectPeak()
}

// bracketNext: the next bracket point, or more false when the bracket is
// over (c < 0: and so is the search, why says why).
func (s *searcher) bracketNext() (c int, why string, more bool) {
	last := s.probes[len(s.probes)-1]
	next := min(last.conns*BracketFactor, s.hi)
	if s.rungs != nil {
		next = s.rungAbove(last.conns, next)
	}
	switch {
	case last.failed:
		if last.conns >= s.hi {
			return 0, "", false
		}
		return next, fmt.Sprintf("x%d past %d connections, which failed (no measurement)", BracketFactor, last.conns), true
	case !last.good:
		return 0, "", false
	case s.objective:
		if last.conns >= s.hi {
			return -1, "the top rung meets the objective", false
		}
		return next, fmt.Sprintf("x%d: %d connections met the objective", BracketFactor, last.conns), true
	}
	best := 0.0
	for _, p := range s.probes[:len(s.probes)-1] {
		if p.good {
			best = max(best, p.thr)
		}
	}
	if best > 0 && last.thr <= best*(1+SearchTolerance/2) {
		return 0, "", false
	}
	if last.conns >= s.hi {
		return 0, "", false // still rising at the top: the bisection looks below it
	}
	if best == 0 {
		return next, fmt.Sprintf("x%d after the first measured point", BracketFactor), true
	}
	return next, fmt.Sprintf("x%d: %d connections gained %.0f%% on the best so far", BracketFactor, last.conns, (last.thr/best-1)*100), true
}

// byConns is the measured (not failed) probes sorted by connections.
func (s *searcher) byConns() []probe {
	var ps []probe
	for _, p := range s.probes {
		if !p.failed {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b probe) int { return a.conns - b.conns })
	return ps
}

// midpoint is the geometric midpoint of a < b, and whether it is a new
// connection count strictly between them. When the midpoint itself was
// run and failed (a failed point is left out of the gaps, so the same gap
// asks again), a count next to it is taken instead.
func (s *searcher) midpoint(a, b int) (int, bool) {
	m := int(math.Round(math.Sqrt(float64(a) * float64(b))))
	if s.rungs != nil {
		return s.rungBetween(a, b, math.Sqrt(float64(a)*float64(b)))
	}
	for _, c := range []int{m, m + 1, m - 1} {
		if c > a && c < b && !s.measured(c) {
			return c, true
		}
	}
	return m, false
}

// narrow reports whether the gap a..b is within ±SearchTolerance.
func narrow(a, b int) bool { return float64(b) <= float64(a)*(1+2*SearchTolerance) }

func (s *searcher) bisectPeak() (int, string, string, bool) {
	ps := s.byConns()
	bi := -1
	for i, p := range ps {
		if p.good && (bi < 0 || p.thr > ps[bi].thr) {
			bi = i
		}
	}
	if bi < 0 {
		return 0, "", "no point measured cleanly", false
	}
	b := ps[bi]
	// A plateau: the best's neighbour above it (or, the best being the
	// highest point measured, below it) within the tolerance.
	if bi < len(ps)-1 {
		if r := ps[bi+1]; r.good && r.thr >= b.thr*(1-SearchTolerance) {
			return 0, "", fmt.Sprintf("plateau: %d connections within %.0f%% of the best (%d)", r.conns, SearchTolerance*100, b.conns), false
		}
	} else if bi > 0 {
		if l := ps[bi-1]; l.good && l.thr >= b.thr*(1-SearchTolerance) {
			return 0, "", fmt.Sprintf("plateau: %d connections within %.0f%% of the best (%d)", l.conns, SearchTolerance*100, b.conns), false
		}
	}
	type gap struct {
		lo, hi, mid int
		why         string
	}
	var gaps []gap
	if bi < len(ps)-1 {
		r := ps[bi+1]
		if m, ok := s.midpoint(b.conns, r.conns); ok && !narrow(b.conns, r.conns) {
			gaps = append(gaps, gap{b.conns, r.conns, m, fmt.Sprintf("midpoint of the best (%d) and %d, which fell", b.conns, r.conns)})
		}
	}
	if bi > 0 {
		l := ps[bi-1]
		// Per-connection throughput never rises with load, so a point
		// between l and b makes at most l's rate times its connections:
		// if that cannot beat b by the tolerance, no peak hides there.
		could := l.thr / float64(l.conns) * float64(b.conns)
		if m, ok := s.midpoint(l.conns, b.conns); ok && l.good && !narrow(l.conns, b.conns) && could > b.thr*(1+SearchTolerance) {
			gaps = append(gaps, gap{l.conns, b.conns, m, fmt.Sprintf("midpoint of %d and the best (%d): the rate per connection fell between them", l.conns, b.conns)})
		}
	}
	if len(gaps) == 0 {
		return 0, "", fmt.Sprintf("best at %d connections, no gap beside it left to bisect (within ±%.0f%%, no count inside, or the rate per connection held below it)", b.conns, SearchTolerance*100), false
	}
	// The wider gap in log space first; the upper one on a tie.
	g := gaps[0]
	for _, h := range gaps[1:] {
		if float64(h.hi)/float64(h.lo) > float64(g.hi)/float64(g.lo) {
			g = h
		}
	}
	return g.mid, PhaseBisect, g.why, true
}

func (s *searcher) bisectObjective() (int, string, string, bool) {
	ps := s.byConns()
	gi := -1
	for i, p := range ps {
		if p.good {
			gi = i
		}
	}
	if gi < 0 {
		return 0, "", "no point met the objective", false
	}
	g := ps[gi]
	if gi == len(ps)-1 {
		return 0, "", fmt.Sprintf("%d connections met the objective, nothing measured above it", g.conns), false
	}
	b := ps[gi+1]
	m, ok := s.midpoint(g.conns, b.conns)
	if !ok || narrow(g.conns, b.conns) {
		return 0, "", fmt.Sprintf("%d connections met the objective and %d did not: within ±%.0f%%", g.conns, b.conns, SearchTolerance*100), false
	}
	return m, PhaseBisect, fmt.Sprintf("midpoint of %d (met the objective) and %d (did not)", g.conns, b.conns), true
}

// rungAbove is the rung above c nearest want in log space (the lower
// on a tie); the top rung when none is above c.
func (s *searcher) rungAbove(c, want int) int {
	best := 0
	for _, r := range s.rungs {
		if r <= c {
			continue
		}
		if best == 0 || math.Abs(math.Log(float64(r)/float64(want))) < math.Abs(math.Log(float64(best)/float64(want))) {
			best = r
		}
	}
	if best == 0 {
		return s.hi
	}
	return best
}

// rungBetween is the rung strictly between a and b nearest mid in log
// space that is not measured yet, and whether there is one.
func (s *searcher) rungBetween(a, b int, mid float64) (int, bool) {
	best := 0
	for _, r := range s.rungs {
		if r <= a || r >= b || s.measured(r) {
			continue
		}
		if best == 0 || math.Abs(math.Log(float64(r)/mid)) < math.Abs(math.Log(float64(best)/mid)) {
			best = r
		}
	}
	return best, best != 0
}

package schedule

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/stats"
	"github.com/ceiling-bench/ceiling/result"
)

// TwoArmPlan is what a two-arm sweep's schedule is made of.
type TwoArmPlan struct {
	Batches []int             // BATCH_LADDER: the compared rungs' order
	Order   []result.PointKey // the first pass's keys, in Order
	Reps    int               // COMPARE_REPS: the blocks asked at each compared rung
	Alpha   float64           // ALPHA
	Stop    string            // COMPARE_STOP: result.StopFixed, StopPocock or StopOBF

	// Scope is COMPARE_SCOPE. result.ScopeCurve (or empty) runs Order as
	// the first pass and compares every batch's rung. result.ScopeHeadline
	// searches the headline batch's Ladder, both arms at each rung the
	// search picks (a rung-only bisection, Order unused), then runs
	// every other batch once per arm at the rung it compares
	// (HeadlineRung), and compares that rung only.
	Scope         string
	HeadlineBatch int
	Ladder        []int
	// Prefer is the rung to compare at when the arms' ceiling rungs
	// differ (the last published headline's connections); 0: none.
	Prefer int
	// MaxBlocks is the most blocks a compared rung runs, re-run ones
	// included; 0: MaxBlocks(Reps).
	MaxBlocks int
	// Budget, when > 0, is COMPARE_BUDGET: no compare block is given that
	// would end past it, by the points' Observed.Elapsed and the compare
	// blocks' mean time so far (BlockCost before one has ended).
	Budget, BlockCost time.Duration
}

// Block is two points of one key, one per arm, in the order they run
// (in a duet, at once: the first on half a).
type Block [2]Point

// TwoArm is a two-arm sweep's schedule: the first pass (FirstPassOrder,
// a block per key), then the compare phase's blocks at CompareRungs'
// rungs.
type TwoArm struct {
	plan  TwoArmPlan
	first []ArmPoint
	at    int        // the next of first
	seen  []Observed // the first pass's points

	compared bool // the first pass is over and the rungs are chosen
	rungs    []result.PointKey
	skipped  []string
	blocks   []blocks // per rung
	j        int      // the next rung to look at in this round
	active   bool     // a rung ran a block in this round
	out      int      // the rung whose block is being measured; -1: none

	// ScopeHeadline's first pass.
	search   *searcher // the headline batch's; nil: ScopeCurve
	searched bool      // the search is over and rung chosen
	rung     int       // the rung compared; 0: none
	others   []int     // the other batches, run once per arm at rung
	step     int       // first-pass blocks given
	notes    []string

	elapsed      time.Duration // the latest Observed.Elapsed
	compareStart time.Duration // elapsed when the first pass ended
	compareRan   int           // compare blocks that ended
	spent        bool          // the budget left no room for another block
}

// blocks is one compared rung's record.
type blocks struct {
	ran, clean int
	d          []float64 // ln(head/base) of the clean blocks
	decided    bool
	why        string // how the rung's blocks ended; "" while they run
}

// NewTwoArm is the schedule of a two-arm sweep planned as p.
func NewTwoArm(p TwoArmPlan) *TwoArm {
	t := &TwoArm{plan: p, out: -1}
	if p.Scope == result.ScopeHeadline {
		t.search = newRungSearcher(p.HeadlineBatch, p.Ladder)
		for _, b := range p.Batches {
			if b != p.HeadlineBatch {
				t.others = append(t.others, b)
			}
		}
		return t
	}
	t.first = FirstPassOrder(p.Order)
	return t
}

// FirstPass is how many points the first pass runs, at most.
func (t *TwoArm) FirstPass() int {
	if t.search != nil {
		return 2 * (len(t.plan.Ladder) + len(t.others))
	}
	return len(t.first)
}

// Notes say how the first pass's search ended, where the rung compared
// came from, and how each compared rung's blocks ended, for
// result.Result.Notes; they grow as the sweep goes.
func (t *TwoArm) Notes() []string {
	out := slices.Clone(t.notes)
	for j, s := range t.blocks {
		if s.why != "" {
			k := t.rungs[j]
			out = append(out, fmt.Sprintf("comparison at batch %d, %d connections: %s", k.Batch, k.Connections, s.why))
		}
	}
	return out
}

// Budgeted reports whether the budget ended the compare phase.
func (t *TwoArm) Budgeted() bool { return t.spent }

// Next takes what the points of the block it gave last measured (nothing
// on the first call) and returns the next block; false: the sweep is
// done.
//
// The first pass gives every key of Order as a block of role sweep, the
// arm that goes first alternating. When it is over, CompareRungs picks
// each batch's rung from what it measured (Rungs), and the compare
// phase's blocks of role compare follow: at every compared rung one
// repeat per arm, the rungs round-robin and each rung's blocks in ABBA
// order (CompareSchedule's order while nothing is lost). A rung is done
// when Reps of its blocks have both repeats clean, or when a sequential
// rule (Stop) finds its paired test decided at this look
// (result.SequentialLevel), or when it has run MaxBlocks, or when even
// all the blocks left could not bring it to the pairs its test needs
// (stats.MinPairs). A block that lost a repeat (lost, failed, not clean)
// is run again, keeping the order: its rep is the rung's next, so a
// block's Key.Rep at or past Reps is one beyond the blocks asked.
func (t *TwoArm) Next(last ...Observed) (Block, bool) {
	t.observe(last)
	if t.search != nil {
		if b, ok := t.nextHeadline(); ok {
			return b, true
		}
	} else if t.at+1 < len(t.first) {
		a, b := t.first[t.at], t.first[t.at+1]
		t.at += 2
		return Block{{Role: result.RoleSweep, Arm: a.Arm, Key: a.Key}, {Role: result.RoleSweep, Arm: b.Arm, Key: b.Key}}, true
	}
	if !t.compared {
		t.compared = true
		t.compareStart = t.elapsed
		if t.search != nil {
			if t.rung > 0 {
				t.rungs = []result.PointKey{{Batch: t.plan.HeadlineBatch, Connections: t.rung}}
			} else {
				t.skipped = append(t.skipped, fmt.Sprintf("comparison: batch %d not compared: neither arm ran clean at any rung of the first pass", t.plan.HeadlineBatch))
			}
		} else {
			t.rungs, t.skipped = CompareRungs(t.seen, t.plan.Batches)
		}
		t.blocks = make([]blocks, len(t.rungs))
	}
	if t.overBudget() {
		return Block{}, false
	}
	for {
		for t.j < len(t.rungs) {
			j := t.j
			t.j++
			s := &t.blocks[j]
			if t.done(s) {
				continue
			}
			t.active, t.out = true, j
			k := t.rungs[j]
			key := result.PointKey{Batch: k.Batch, Connections: k.Connections, Rep: s.ran}
			a, b := result.ArmBase, result.ArmHead
			if (s.ran+j)%2 == 1 {
				a, b = b, a
			}
			return Block{{Role: result.RoleCompare, Arm: a, Key: key}, {Role: result.RoleCompare, Arm: b, Key: key}}, true
		}
		if !t.active {
			return Block{}, false
		}
		t.j, t.active = 0, false
	}
}

// Rungs are the compared rungs, in batch ladder order, and a warning for
// each batch compared elsewhere than where both arms ran clean or not
// compared at all; ok false until the first pass is over.
func (t *TwoArm) Rungs() (rungs []result.PointKey, skipped []string, ok bool) {
	return t.rungs, t.skipped, t.compared
}

// most is the most blocks a compared rung runs.
func (t *TwoArm) most() int {
	if t.plan.MaxBlocks > 0 {
		return t.plan.MaxBlocks
	}
	return MaxBlocks(t.plan.Reps)
}

func (t *TwoArm) done(s *blocks) bool {
	need, most := stats.MinPairs(t.plan.Alpha), t.most()
	switch {
	case s.why != "":
	case s.decided:
		s.why = fmt.Sprintf("decided at block %d (%d with both arms clean), at this look's level of COMPARE_STOP=%s", s.ran, s.clean, t.plan.Stop)
	case s.clean >= t.plan.Reps:
		s.why = fmt.Sprintf("%d blocks with both arms clean, as planned, in %d", s.clean, s.ran)
	case s.ran >= most:
		s.why = fmt.Sprintf("ran the most blocks, %d, of which %d with both arms clean", s.ran, s.clean)
	case s.clean+(most-s.ran) < need:
		s.why = fmt.Sprintf("stopped after %d blocks: even the %d left could not bring the %d with both arms clean to the %d the test needs", s.ran, most-s.ran, s.clean, need)
	default:
		return false
	}
	return true
}

// overBudget ends every compared rung's blocks when the next block
// would end past the budget: the compare blocks' mean time so far (the
// planned BlockCost before one has ended) added to the time spent.
func (t *TwoArm) overBudget() bool {
	if t.plan.Budget <= 0 {
		return false
	}
	if !t.spent {
		cost := t.plan.BlockCost
		if t.compareRan > 0 {
			cost = (t.elapsed - t.compareStart) / time.Duration(t.compareRan)
		}
		if t.elapsed+cost <= t.plan.Budget {
			return false
		}
		t.spent = true
		for j := range t.blocks {
			s := &t.blocks[j]
			if !t.done(s) {
				s.why = fmt.Sprintf("COMPARE_BUDGET %s spent after %d blocks (%d with both arms clean): %s run, and a block takes %s",
					t.plan.Budget, s.ran, s.clean, t.elapsed.Round(time.Second), cost.Round(100*time.Millisecond))
			}
		}
	}
	return true
}

func (t *TwoArm) observe(last []Observed) {
	for _, o := range last {
		t.elapsed = max(t.elapsed, o.Elapsed)
	}
	if !t.compared {
		t.seen = append(t.seen, last...)
		if t.search != nil && !t.searched && len(last) == 2 {
			t.search.Record(jointProbe(last[0], last[1]))
		}
		return
	}
	if t.out < 0 {
		return
	}
	t.compareRan++
	s := &t.blocks[t.out]
	t.out = -1
	s.ran++
	if len(last) != 2 || !last[0].measured() || !last[1].measured() {
		return
	}
	s.clean++
	base, head := last[0], last[1]
	if base.Arm != result.ArmBase {
		base, head = head, base
	}
	s.d = append(s.d, math.Log(head.ThroughputPerS/base.ThroughputPerS))
	reps, alpha := t.plan.Reps, t.plan.Alpha
	if t.plan.Stop != result.StopFixed && s.clean >= stats.MinPairs(alpha) && s.clean < reps {
		s.decided = stats.SignedRank(s.d) < result.SequentialLevel(t.plan.Stop, s.clean, reps, alpha)
	}
}

// measured: a compare repeat that counts, in the curve and clean.
func (o Observed) measured() bool { return !o.Lost && o.Clean }

// nextHeadline is ScopeHeadline's first pass: the search's next block,
// then the rung (HeadlineRung), then every other batch once per arm at
// it; ok false once it is over.
func (t *TwoArm) nextHeadline() (Block, bool) {
	hb := t.plan.HeadlineBatch
	if !t.searched {
		conns, phase, why, ok := t.search.Next()
		if ok {
			return t.firstBlock(result.PointKey{Batch: hb, Connections: conns}, len(t.search.probes)+1, phase, why), true
		}
		t.searched = true
		var tried []string
		for _, p := range t.search.probes {
			tried = append(tried, fmt.Sprint(p.conns))
		}
		t.notes = append(t.notes, fmt.Sprintf("first pass: batch %d searched on its ladder's rungs, both arms at each (%s: %d of %d rungs); %s",
			hb, joinWords(tried), len(tried), len(t.plan.Ladder), why))
		var note string
		t.rung, note = HeadlineRung(t.seen, hb, t.plan.Prefer)
		if note != "" {
			t.notes = append(t.notes, note)
		}
	}
	if t.rung == 0 || len(t.others) == 0 {
		return Block{}, false
	}
	b := t.others[0]
	t.others = t.others[1:]
	return t.firstBlock(result.PointKey{Batch: b, Connections: t.rung}, 0, "", ""), true
}

// firstBlock is a first-pass block at k, the arm that goes first
// alternating from block to block (base first on the first).
func (t *TwoArm) firstBlock(k result.PointKey, step int, phase, why string) Block {
	a, b := result.ArmBase, result.ArmHead
	if t.step%2 == 1 {
		a, b = b, a
	}
	t.step++
	p := func(arm string) Point {
		return Point{Role: result.RoleSweep, Arm: arm, Key: k, Step: step, Phase: phase, Reason: why}
	}
	return Block{p(a), p(b)}
}

// jointProbe is what the headline search reads of a first-pass block:
// the mean of the arms' throughputs; failed when neither measured, good
// only when both did cleanly enough to be read.
func jointProbe(a, b Observed) probe {
	failed := (a.Lost || a.Failed) && (b.Lost || b.Failed)
	good := !a.Lost && !b.Lost && a.Good && b.Good
	return probe{conns: a.Key.Connections, thr: (a.ThroughputPerS + b.ThroughputPerS) / 2, failed: failed, good: good}
}

// HeadlineRung picks the headline batch's rung to compare from a
// ScopeHeadline first pass (seen): each arm's ceiling rung (its highest
// clean throughput at the batch) when the two agree; else prefer when
// both arms ran clean there; else the rung where both ran clean with the
// highest mean (CompareRungs' rule). note says why when the arms did not
// agree; 0: neither arm ran clean at any rung.
func HeadlineRung(seen []Observed, batch, prefer int) (conns int, note string) {
	top := map[string]int{}
	best := map[string]float64{}
	clean := map[string]map[int]bool{result.ArmBase: {}, result.ArmHead: {}}
	for _, p := range seen {
		if p.Lost || p.Role != result.RoleSweep || p.Key.Batch != batch || !p.Clean || clean[p.Arm] == nil {
			continue
		}
		clean[p.Arm][p.Key.Connections] = true
		if p.ThroughputPerS > best[p.Arm] {
			best[p.Arm], top[p.Arm] = p.ThroughputPerS, p.Key.Connections
		}
	}
	b, h := top[result.ArmBase], top[result.ArmHead]
	if b != 0 && b == h {
		return b, ""
	}
	differ := fmt.Sprintf("the arms' ceiling rungs differ (base %s, head %s)", rungWord(b), rungWord(h))
	if prefer > 0 && clean[result.ArmBase][prefer] && clean[result.ArmHead][prefer] {
		return prefer, fmt.Sprintf("comparison: %s: compared at %d connections, the last published headline's rung", differ, prefer)
	}
	rungs, skipped := CompareRungs(seen, []int{batch})
	if len(rungs) == 0 {
		return 0, ""
	}
	if len(skipped) > 0 {
		return rungs[0].Connections, skipped[0]
	}
	return rungs[0].Connections, fmt.Sprintf("comparison: %s: compared at %d connections, where both ran clean with the highest mean", differ, rungs[0].Connections)
}

func rungWord(c int) string {
	if c == 0 {
		return "none clean"
	}
	return fmt.Sprint(c)
}

func joinWords(w []string) string {
	if len(w) == 0 {
		return "no rung"
	}
	return strings.Join(w, ", ")
}

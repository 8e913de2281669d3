package schedule

import (
	"fmt"
	"strings"

	"github.com/ceiling-bench/ceiling/result"
)

// firstPass is a two-arm sweep's first pass: with ScopeCurve every key of
// the plan's Order once per arm (FirstPassOrder); with ScopeHeadline a
// search of the headline batch's rungs, both arms at each, then every
// other batch once per arm at the rung found (HeadlineRung).
type firstPass struct {
	plan TwoArmPlan
	// ScopeCurve's keys, and the next to give.
	order []ArmPoint
	at    int
	seen  []Observed // the first pass's points
	run   int        // points run
	over  bool

	// ScopeHeadline's search.
	search   *searcher // the headline batch's; nil: ScopeCurve
	searched bool      // the search is over and rung chosen
	rung     int       // the rung compared; 0: none
	others   []int     // the other batches, run once per arm at rung
	nOthers  int       // len(others) before any ran
	step     int       // blocks given
	retried  int       // blocks given by retry
	// fits says whether one more first-pass block still leaves the
	// budget the blocks the paired test needs; noTime: a retry did not.
	fits   func() bool
	noTime bool
	notes  []string
}

// FirstRetries is how many blocks a ScopeHeadline first pass may add at
// its best rung when no rung ran clean in both arms and that rung's
// points were contended: the CPUs taken say nothing about the servers,
// and a burst of the hypervisor's steal (minutes, on a shared runner)
// left the whole comparison with nothing to compare while its budget
// still had time for it. Each comes out of the budget (firstOverBudget);
// after them the batch is not compared, and the warning says why.
const FirstRetries = 3

// PhaseRetry is a ScopeHeadline first pass's block run again at the
// search's best rung (FirstRetries).
const PhaseRetry = "retry"

func newFirstPass(p TwoArmPlan) firstPass {
	f := firstPass{plan: p}
	if p.Scope == result.ScopeHeadline {
		f.search = newRungSearcher(p.HeadlineBatch, p.Ladder)
		for _, b := range p.Batches {
			if b != p.HeadlineBatch {
				f.others = append(f.others, b)
			}
		}
		f.nOthers = len(f.others)
		return f
	}
	f.order = FirstPassOrder(p.Order)
	return f
}

// most is how many points the first pass runs, at most: the retries
// given so far count, the ones that may follow do not (they run only
// when contention took the CPUs, and the budget is held before each).
func (f *firstPass) most() int {
	if f.search != nil {
		return 2 * (len(f.plan.Ladder) + f.nOthers + f.retried)
	}
	return len(f.order)
}

// left is how many points the first pass may still run, at most.
func (f *firstPass) left() int {
	if f.over {
		return 0
	}
	return max(0, f.most()-f.run)
}

// next is the first pass's next block; false: it is over.
func (f *firstPass) next() (Block, bool) {
	if f.search != nil {
		return f.nextHeadline()
	}
	if f.at+1 >= len(f.order) {
		return Block{}, false
	}
	a, b := f.order[f.at], f.order[f.at+1]
	f.at += 2
	return Block{{Role: result.RoleSweep, Arm: a.Arm, Key: a.Key}, {Role: result.RoleSweep, Arm: b.Arm, Key: b.Key}}, true
}

func (f *firstPass) observe(last []Observed) {
	f.seen = append(f.seen, last...)
	f.run += len(last)
	if f.search != nil && !f.searched && len(last) == 2 {
		f.search.Record(jointProbe(last[0], last[1]))
	}
	if f.searched && f.rung == 0 && f.retried > 0 {
		var note string
		f.rung, note = HeadlineRung(f.seen, f.plan.HeadlineBatch, f.plan.Prefer)
		if f.rung > 0 {
			if note != "" {
				f.notes = append(f.notes, note)
			}
			f.notes = append(f.notes, fmt.Sprintf("first pass: no rung of batch %d ran clean in both arms, their CPUs contended; %d connections, run again (%d of at most %d), ran clean in both",
				f.plan.HeadlineBatch, f.rung, f.retried, FirstRetries))
		}
	}
}

// nextHeadline is ScopeHeadline's first pass: the search's next block,
// then the rung (HeadlineRung), then every other batch once per arm at
// it; ok false once it is over.
func (f *firstPass) nextHeadline() (Block, bool) {
	hb := f.plan.HeadlineBatch
	if !f.searched {
		conns, phase, why, ok := f.search.Next()
		if ok {
			return f.firstBlock(result.PointKey{Batch: hb, Connections: conns}, len(f.search.probes)+1, phase, why), true
		}
		f.searched = true
		var tried []string
		for _, p := range f.search.probes {
			tried = append(tried, fmt.Sprint(p.conns))
		}
		f.notes = append(f.notes, fmt.Sprintf("first pass: batch %d searched on its ladder's rungs, both arms at each (%s: %d of %d rungs); %s",
			hb, joinWords(tried), len(tried), len(f.plan.Ladder), why))
		var note string
		f.rung, note = HeadlineRung(f.seen, hb, f.plan.Prefer)
		if note != "" {
			f.notes = append(f.notes, note)
		}
	}
	if f.rung == 0 {
		return f.retry()
	}
	if len(f.others) == 0 {
		return Block{}, false
	}
	b := f.others[0]
	f.others = f.others[1:]
	return f.firstBlock(result.PointKey{Batch: b, Connections: f.rung}, 0, "", ""), true
}

// firstBlock is a first-pass block at k, the arm that goes first
// alternating from block to block (base first on the first).
func (f *firstPass) firstBlock(k result.PointKey, step int, phase, why string) Block {
	a, b := result.ArmBase, result.ArmHead
	if f.step%2 == 1 {
		a, b = b, a
	}
	f.step++
	p := func(arm string) Point {
		return Point{Role: result.RoleSweep, Arm: arm, Key: k, Step: step, Phase: phase, Reason: why}
	}
	return Block{p(a), p(b)}
}

// retry is the block that runs the headline batch's best contended rung
// again (FirstRetries); ok false when there is none, or no retry left.
func (f *firstPass) retry() (Block, bool) {
	c := bestContended(f.seen, f.plan.HeadlineBatch)
	if c == 0 || f.retried >= FirstRetries {
		return Block{}, false
	}
	if f.fits != nil && !f.fits() {
		f.noTime = true
		return Block{}, false
	}
	f.retried++
	why := fmt.Sprintf("no rung ran clean in both arms, their CPUs contended: the best measured (%d connections) again, %d of at most %d", c, f.retried, FirstRetries)
	return f.firstBlock(result.PointKey{Batch: f.plan.HeadlineBatch, Connections: c}, len(f.search.probes)+f.retried, PhaseRetry, why), true
}

// bestContended is the rung of batch whose points had the highest mean
// throughput among the rungs where every point measured without errors
// (Observed.Good) and one was contended: where a block run again may be
// clean and be the rung compared. 0: none.
func bestContended(seen []Observed, batch int) int {
	type rung struct {
		sum       float64
		n         int
		bad, took bool
	}
	at := map[int]*rung{}
	for _, p := range seen {
		if p.Role != result.RoleSweep || p.Key.Batch != batch {
			continue
		}
		r := at[p.Key.Connections]
		if r == nil {
			r = &rung{}
			at[p.Key.Connections] = r
		}
		if p.Lost || p.Failed || !p.Good {
			r.bad = true
			continue
		}
		r.sum += p.ThroughputPerS
		r.n++
		r.took = r.took || p.Contended
	}
	best, mean := 0, 0.0
	for c, r := range at {
		if r.bad || !r.took {
			continue
		}
		if m := r.sum / float64(r.n); m > mean || (m == mean && c < best) {
			best, mean = c, m
		}
	}
	return best
}

// rungs are the rungs to compare once the pass is over, and a warning
// for each batch compared elsewhere than where both arms ran clean or
// not compared at all.
func (f *firstPass) rungs() (rungs []result.PointKey, skipped []string) {
	if f.search == nil {
		return CompareRungs(f.seen, f.plan.Batches)
	}
	if f.rung > 0 {
		return []result.PointKey{{Batch: f.plan.HeadlineBatch, Connections: f.rung}}, nil
	}
	var again []string
	if f.retried > 0 {
		again = append(again, fmt.Sprintf("its best rung run again %s, contended each time", times(f.retried)))
	}
	if f.noTime {
		again = append(again, "COMPARE_BUDGET had no time left to run its best rung again and still buy the blocks the paired test needs")
	}
	why := ""
	if len(again) > 0 {
		why = " (" + strings.Join(again, "; ") + ")"
	}
	return nil, []string{fmt.Sprintf("comparison: batch %d not compared: neither arm ran clean at any rung of the first pass%s", f.plan.HeadlineBatch, why)}
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

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
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

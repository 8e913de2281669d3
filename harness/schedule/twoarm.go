package schedule

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ceiling-bench/ceiling/internal/stats"
	"github.com/ceiling-bench/ceiling/result"
)

// TwoArmPlan is what a two-arm sweep's schedule is made of.
type TwoArmPlan struct {
	Batches []int             // BATCH_LADDER: the compared rungs' order
	Order   []result.PointKey // the first pass's keys, in Order
	// Reps is COMPARE_REPS: the blocks asked at each compared rung. Under
	// a Budget the schedule plans its own once the first pass is over
	// (Planned), from what the first pass measured.
	Reps  int
	Alpha float64 // ALPHA
	Stop  string  // COMPARE_STOP: result.StopFixed, StopPocock or StopOBF

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
	// MaxReps caps the blocks a Budget plans (knob.MaxCompareReps); 0:
	// no cap.
	MaxReps int
	// Budget, when > 0, is COMPARE_BUDGET: the whole run's time, by the
	// run's clock (Report.Elapsed). No step is given that would end past
	// it, the final stop of warm arms included.
	Budget time.Duration

	// Arms is COMPARE_ARMS: ArmsWarm, ArmsFresh, or ArmsAuto (decided
	// from Costs, or, while they are not known, from the first block,
	// which boots its own servers and times them); empty: ArmsFresh.
	Arms string
	// RebootEvery is COMPARE_REBOOT_EVERY: warm arms are booted afresh
	// every this many blocks; 0: Costs.RebootEvery's automatic count;
	// -1: never.
	RebootEvery int
	// Costs are what the plan knows before anything boots: each arm's
	// ready and stop (Known false: nothing gave them), and a point's
	// overhead (0: DefaultOverhead).
	Costs Costs
	// First and Compare are the first pass's and the blocks' windows.
	First, Compare Window
	// Duet: a block's two points run at once, each on its half.
	Duet bool
	// WantsProfile says whether a headline verdict asks for profiled
	// blocks (COMPARE_PROFILE, knob.WantsProfile); nil: never.
	// ProfileBlocks is how many (each a point per arm, PointSpec.Profile),
	// run after the compared rungs' blocks at the headline's rung, so that
	// profiling never perturbs the blocks that decided; ReserveProfile
	// (COMPARE_PROFILE=on) keeps their time out of the blocks the budget
	// plans.
	WantsProfile   func(verdict string) bool
	ProfileBlocks  int
	ReserveProfile bool
	// ProfileUnable is why no profile can be taken on this machine (perf
	// missing, or not permitted): the profiled blocks are not run, none
	// of their time is kept from the blocks, and ProfileWhy says why.
	ProfileUnable string
	// SizeWindows: the blocks' windows are chosen from the first pass's
	// timelines (Size) when it is over, Compare the default they must
	// beat; false: Compare as given (COMPARE_DURATION, COMPARE_WARMUP).
	SizeWindows bool
}

// Block is two points of one key, one per arm, in the order they run
// (in a duet, at once: the first on half a).
type Block [2]Point

// StepKind is what a two-arm schedule's Step asks.
type StepKind int

const (
	// Done: the sweep is over.
	Done StepKind = iota
	// RunBlock: measure Step.Block's two points.
	RunBlock
	// BootArms: boot Step.Arms' servers afresh and keep them up, frozen
	// (warm arms), each timed (Report.Arms).
	BootArms
	// StopArms: stop Step.Arms' servers, each timed.
	StopArms
)

// Step is what the schedule asks next.
type Step struct {
	Kind StepKind
	// Block is RunBlock's, measured with Window (zero: the first pass's,
	// the plan's DURATION and WARMUP). Warm: the points measure the arms'
	// servers kept up (BootArms), thawed for the point and frozen after
	// it; else each point boots its own server and stops it.
	Block  Block
	Window Window
	Warm   bool
	// Arms and Why are BootArms' and StopArms': the arms, and why, in
	// words, for the progress line and the result.
	Arms []string
	Why  string
}

// Report is what the step given last did: a block's points as judged,
// or the arms' boots or stops, and the run's clock when it ended; after a
// compare block, the headline's verdict so far (result.Comparison's:
// what profiling asks after).
type Report struct {
	Points  []Observed
	Arms    []ArmEvent
	Elapsed time.Duration
	Verdict string
}

// ArmEvent is one arm's boot (the time from its start to its readiness)
// or stop (from SIGTERM to its exit and free ports); Failed says why it
// did not boot, or did not stop cleanly ("": it did).
type ArmEvent struct {
	Arm    string
	Cost   time.Duration
	Failed string
}

// TwoArm is a two-arm sweep's schedule: the first pass, then the compare
// phase's blocks at the rungs the first pass found, with the boots and
// stops of warm arms between them. Next is its only input.
type TwoArm struct {
	plan  TwoArmPlan
	costs costBook
	arms  armState

	first firstPass
	cmp   comparePhase

	// short says why the run ended before it had a rung to compare (the
	// budget); nil: it did not.
	short *result.Ended

	// sizing is the blocks' windows chosen when the first pass ended.
	sizing *Sizing
	// verdict is the headline's verdict as last reported; profile the
	// profiled blocks' state: asked (given), and why there are none.
	verdict string
	profile profileState

	// timed: the first block's costs were held against the budget
	// (feasible).
	timed bool

	queue   []Step // steps decided, not given yet
	given   Step   // the step given last
	elapsed time.Duration
	notes   []string
	over    bool
}

// NewTwoArm is the schedule of a two-arm sweep planned as p.
func NewTwoArm(p TwoArmPlan) *TwoArm {
	if p.Arms == "" {
		p.Arms = ArmsFresh
	}
	t := &TwoArm{plan: p}
	t.costs = newCostBook(p.Costs)
	t.first = newFirstPass(p)
	t.first.fits = t.retryFits
	t.cmp.out = -1
	t.arms.up = map[string]bool{}
	switch {
	case p.Arms == ArmsWarm && p.Duet:
		t.decide(false, "fresh: a duet runs both arms at once, each on its half of the machine, and warm arms run one after the other")
	case p.Arms != ArmsAuto:
		t.decide(p.Arms == ArmsWarm, fmt.Sprintf("%s: COMPARE_ARMS=%s", p.Arms, p.Arms))
	case p.Costs.Base.Known && p.Costs.Head.Known || p.Duet:
		t.decide(t.choose())
	}
	return t
}

// FirstPass is how many points the first pass runs, at most.
func (t *TwoArm) FirstPass() int { return t.first.most() }

// Notes say how the arms ran and why, how the first pass's search ended,
// where the rung compared came from, and how each compared rung's blocks
// ended, for result.Result.Notes; they grow as the sweep goes.
func (t *TwoArm) Notes() []string {
	out := slices.Clone(t.notes)
	out = append(out, t.first.notes...)
	for j, s := range t.cmp.blocks {
		if s.ended != nil {
			k := t.cmp.rungs[j]
			out = append(out, fmt.Sprintf("comparison at batch %d, %d connections: %s", k.Batch, k.Connections, s.ended.Text))
		}
	}
	return out
}

// Budgeted reports whether the budget ended the compare phase.
func (t *TwoArm) Budgeted() bool { return t.cmp.spent }

// Planned is the blocks planned at each compared rung: Reps, or under a
// budget what it buys once the first pass is over; 0 before that.
func (t *TwoArm) Planned() int { return t.cmp.planned }

// Rungs are the compared rungs, in batch ladder order, and a warning for
// each batch compared elsewhere than where both arms ran clean or not
// compared at all; ok false until the first pass is over.
func (t *TwoArm) Rungs() (rungs []result.PointKey, skipped []string, ok bool) {
	return t.cmp.rungs, t.cmp.skipped, t.cmp.started
}

// Ended is why each compared rung's blocks stopped, keyed by the rung
// (Rep 0); a rung still running has none. A run that ended before it
// had a rung (the budget) has its reason under the headline batch at 0
// connections.
func (t *TwoArm) Ended() map[result.PointKey]result.Ended {
	out := map[result.PointKey]result.Ended{}
	if t.short != nil {
		out[result.PointKey{Batch: t.plan.HeadlineBatch}] = *t.short
	}
	for j, s := range t.cmp.blocks {
		if s.ended != nil {
			out[t.cmp.rungs[j]] = *s.ended
		}
	}
	return out
}

// Next takes what the step it gave last did (an empty Report on the
// first call) and returns the next step; Kind Done: the sweep is over.
//
// The first pass gives its blocks (role sweep) as firstPass chooses
// them. When it is over, CompareRungs (or, with ScopeHeadline,
// HeadlineRung) picks the rungs, the blocks are planned from the costs
// measured so far, and the compare phase's blocks (role compare) follow:
// at every compared rung one repeat per arm, the rungs round-robin and
// each rung's blocks in ABBA order. A rung is done when Reps of its
// blocks have both repeats clean, or when a sequential rule (Stop) finds
// its paired test decided at this look (result.SequentialLevel), or when
// it has run MaxBlocks, or when even all the blocks left could not bring
// it to the pairs its test needs (stats.MinPairs), or when the budget
// has no time for another. A block that lost a repeat (lost, failed, not
// clean) is run again, keeping the order: its rep is the rung's next, so
// a block's Key.Rep at or past Reps is one beyond the blocks asked.
//
// Warm arms add their steps: both arms booted before their first block,
// stopped and booted afresh between the first pass and the blocks (which
// times their stop) and every RebootEvery blocks, an arm found down
// booted again, and both stopped at the end.
func (t *TwoArm) Next(r Report) Step {
	t.observe(r)
	s := t.next()
	t.given = s
	if s.Kind == Done {
		t.over = true
	}
	return s
}

func (t *TwoArm) next() Step {
	if t.over {
		return Step{}
	}
	if len(t.queue) > 0 {
		s := t.queue[0]
		t.queue = t.queue[1:]
		return s
	}
	if t.short != nil {
		return t.end()
	}
	if !t.first.over {
		if b, ok := t.first.next(); ok {
			if t.firstOverBudget() {
				return t.end()
			}
			return t.block(b, Window{})
		}
		t.turn()
		if len(t.queue) > 0 {
			return t.next()
		}
	}
	if !t.cmp.isPlanned {
		// Warm arms booted afresh for the blocks: their stop is timed.
		t.planBlocks(Ahead{Booted: true})
		t.cmp.isPlanned = true
	}
	if s, ok := t.nextBlock(); ok {
		return s
	}
	if s, ok := t.nextProfiled(); ok {
		return s
	}
	return t.end()
}

// block is RunBlock for b, warm where the arms run warm: an arm not up
// is booted first.
func (t *TwoArm) block(b Block, w Window) Step {
	s := Step{Kind: RunBlock, Block: b, Window: w, Warm: t.arms.warm}
	if !t.arms.decided {
		s.Warm = false // the first block of ArmsAuto times the boots
		return s
	}
	if t.arms.warm {
		if down := t.arms.down(); len(down) > 0 {
			t.queue = append(t.queue, s)
			return t.bootStep(down, "warm arms: boot the servers kept up between points")
		}
	}
	return s
}

// end stops warm arms' servers, then ends the sweep.
func (t *TwoArm) end() Step {
	if up := t.arms.upArms(); len(up) > 0 {
		return t.stopStep(up, "the run is over")
	}
	return Step{}
}

func (t *TwoArm) bootStep(arms []string, why string) Step {
	for _, a := range arms {
		t.arms.up[a] = true
	}
	return Step{Kind: BootArms, Arms: arms, Why: why}
}

func (t *TwoArm) stopStep(arms []string, why string) Step {
	for _, a := range arms {
		t.arms.up[a] = false
	}
	return Step{Kind: StopArms, Arms: arms, Why: why}
}

// observe takes in what the step given last did.
func (t *TwoArm) observe(r Report) {
	t.elapsed = max(t.elapsed, r.Elapsed)
	if r.Verdict != "" {
		t.verdict = r.Verdict
	}
	for _, o := range r.Points {
		t.elapsed = max(t.elapsed, o.Elapsed)
	}
	switch t.given.Kind {
	case BootArms, StopArms:
		for _, e := range r.Arms {
			if t.given.Kind == BootArms {
				t.arms.booted(e, t.costs.ready)
			} else {
				t.costs.stop(e)
			}
			if e.Failed != "" && t.given.Kind == BootArms && t.arms.warm {
				// A server that cannot stay up is measured as seed
				// 002 does: a fresh one per point, whose failures the
				// curve records with their logs.
				t.arms.warm = false
				t.notes = append(t.notes, fmt.Sprintf("arms: the %s's server did not boot to be kept up (%s): every point boots its own from here", e.Arm, e.Failed))
			}
		}
		return
	case RunBlock:
	default:
		return
	}
	fresh := !t.given.Warm
	for _, o := range r.Points {
		if fresh {
			t.costs.point(o)
		}
		if o.ArmDown && t.arms.warm {
			t.arms.up[o.Arm] = false
		}
	}
	t.costs.block(t.given, r.Points, fresh)
	switch {
	case !t.first.over:
		t.first.observe(r.Points)
	case t.given.Block[0].Role == result.RoleProfile:
		t.profile.ran++
	default:
		t.observeBlock(r.Points)
	}
	if !t.arms.decided {
		t.decide(t.choose())
	}
	if !t.timed {
		// The first block timed the costs, whoever chose the arms.
		t.timed = true
		t.feasible()
	}
}

// feasible ends the run at once when the costs just timed show that the
// budget cannot buy the blocks the paired test needs after the first
// pass: as soon as that is known, saying what budget would.
func (t *TwoArm) feasible() {
	p := t.plan
	if p.Budget <= 0 || t.first.over {
		return
	}
	c := t.costs.now()
	min := MinBlocks(p.Alpha)
	ahead := Ahead{FirstLeft: t.first.left(), Booted: len(t.arms.upArms()) == 2, Turn: true}
	n, need := c.Blocks(p.Budget-t.elapsed, ahead, p.First, t.window(), t.arms.warm, p.Duet, p.RebootEvery, min)
	if n >= min {
		return
	}
	want := roundSecond(t.elapsed + need).Round(10 * time.Second)
	t.short = &result.Ended{Kind: result.EndNoTime, NeedBudgetNs: int64(want), Blocks: 0,
		Text: fmt.Sprintf("COMPARE_BUDGET %s cannot buy the %d blocks the paired test needs: the servers take %s and %s to be ready and %s and %s to stop (%s), so the first pass (up to %d more points) and %d blocks take %s more after the %s run; a budget of %s would buy them",
			p.Budget, min, roundCost(c.Base.ready()), roundCost(c.Head.ready()), roundCost(c.Base.stop()), roundCost(c.Head.stop()), c.Source,
			ahead.FirstLeft, min, roundSecond(need), roundSecond(t.elapsed), want)}
	t.notes = append(t.notes, "comparison: "+t.short.Text)
}

// retryFits says whether one more first-pass block still leaves the
// budget the blocks the paired test needs (true without a budget): a
// first pass run again for want of CPUs must not spend the time its
// blocks would have had.
func (t *TwoArm) retryFits() bool {
	p := t.plan
	if p.Budget <= 0 {
		return true
	}
	min := MinBlocks(p.Alpha)
	ahead := Ahead{FirstLeft: t.first.left() + 2, Booted: len(t.arms.upArms()) == 2, Turn: true}
	n, _ := t.costs.now().Blocks(p.Budget-t.elapsed, ahead, p.First, t.window(), t.arms.warm, p.Duet, p.RebootEvery, min)
	return n >= min
}

// firstOverBudget ends the run when the first pass's next block (and the
// final stop of warm arms) would end past the budget.
func (t *TwoArm) firstOverBudget() bool {
	p := t.plan
	if p.Budget <= 0 {
		return false
	}
	c := t.costs.now()
	warm := t.arms.warm && t.arms.decided
	need := c.Point(result.ArmBase, p.First, !warm) + c.Point(result.ArmHead, p.First, !warm)
	if warm {
		need += c.Stop()
		if len(t.arms.down()) > 0 {
			need += c.Boot()
		}
	}
	if t.elapsed+need <= p.Budget {
		return false
	}
	t.short = &result.Ended{Kind: result.EndBudget,
		Text: fmt.Sprintf("COMPARE_BUDGET %s spent in the first pass, after %d points (%s run): no rung to compare was found in time", p.Budget, t.first.run, roundSecond(t.elapsed))}
	t.notes = append(t.notes, "comparison: "+t.short.Text)
	return true
}

// choose is ArmsAuto's decision from the costs known now.
func (t *TwoArm) choose() (bool, string) {
	p := t.plan
	left := time.Duration(0)
	if p.Budget > 0 {
		left = p.Budget - t.elapsed
	}
	ahead := Ahead{FirstLeft: t.first.left(), Turn: true}
	return t.costs.now().Choose(left, ahead, p.First, t.window(), p.Duet, p.RebootEvery)
}

func (t *TwoArm) decide(warm bool, why string) {
	t.arms.decided, t.arms.warm, t.arms.why = true, warm, why
	t.notes = append(t.notes, "arms: "+why)
}

// window is the blocks' window: the plan's until the first pass sized
// it.
func (t *TwoArm) window() Window {
	if t.sizing != nil {
		return t.sizing.Window
	}
	return t.plan.Compare
}

// Sizing is how the blocks' windows were chosen; nil before the first
// pass ended, or when the plan gave them (SizeWindows false).
func (t *TwoArm) Sizing() *Sizing { return t.sizing }

// size chooses the blocks' windows from the first pass (Size): the
// timelines of its points at the compared rungs' connections that
// measured cleanly enough to be read, at half the rung's throughput or
// more, and the log ratios of its blocks whose two points were both
// clean.
func (t *TwoArm) size() {
	if !t.plan.SizeWindows || len(t.cmp.rungs) == 0 {
		return
	}
	var ss []Series
	for _, k := range t.cmp.rungs {
		var top float64
		for _, o := range t.first.seen {
			if o.Key.Connections == k.Connections && o.Key.Batch == k.Batch {
				top = max(top, o.ThroughputPerS)
			}
		}
		for _, o := range t.first.seen {
			if o.Series != nil && o.Good && !o.Lost && o.Key.Connections == k.Connections && o.ThroughputPerS >= top/2 {
				ss = append(ss, *o.Series)
			}
		}
	}
	var pairs []float64
	seen := t.first.seen
	for i := 0; i+1 < len(seen); i += 2 {
		a, b := seen[i], seen[i+1]
		if a.Key == b.Key && a.Arm != b.Arm && a.measured() && b.measured() && a.ThroughputPerS > 0 && b.ThroughputPerS > 0 {
			pairs = append(pairs, math.Log(a.ThroughputPerS/b.ThroughputPerS))
		}
	}
	c := t.costs.now()
	first := t.plan.First
	lag := first.Load() + c.overhead()
	if !t.arms.warm {
		lag += c.Base.ready() + c.Head.stop()
	}
	var fits func(Window) bool
	if t.plan.Budget > 0 {
		// The blocks as turn's planBlocks will plan them, at each window.
		fits = func(w Window) bool {
			n, _ := t.blocksAt(w, Ahead{Booted: true, Turn: t.arms.warm})
			return n >= MinBlocks(t.plan.Alpha)
		}
	}
	s := Size(ss, pairs, first.Duration, lag, c, t.plan.Compare, t.arms.warm, t.plan.Duet, t.plan.RebootEvery, fits)
	t.sizing = &s
	t.notes = append(t.notes, "windows: "+s.Reason)
}

// turn ends the first pass: the rungs to compare, the blocks planned
// (planBlocks; again once warm arms have been booted afresh, which
// times their stop), and for warm arms that fresh start of both servers.
func (t *TwoArm) turn() {
	t.first.over = true
	t.cmp.start(t.first, t.plan)
	if len(t.cmp.rungs) == 0 {
		return
	}
	if !t.arms.warm && t.plan.Arms == ArmsAuto && !t.plan.Duet {
		// Chosen fresh on the costs given or timed once: the first
		// pass timed every point's.
		if warm, why := t.choose(); warm {
			t.decide(true, why)
		}
	}
	t.size()
	t.planBlocks(Ahead{Booted: true, Turn: t.arms.warm})
	if !t.arms.warm || t.cmp.spent {
		t.cmp.isPlanned = true
		return
	}
	if up := t.arms.upArms(); len(up) > 0 {
		t.queue = append(t.queue, t.stopStep(up, "the first pass is over: fresh servers for the blocks"))
	}
	t.queue = append(t.queue, t.bootStep([]string{result.ArmBase, result.ArmHead}, "fresh servers for the blocks"))
}

// Record is how the arms ran, for the result.
func (t *TwoArm) Record() *result.ArmsRecord {
	mode := ArmsFresh
	if t.arms.warm {
		mode = ArmsWarm
	}
	c := t.costs.now()
	rec := &result.ArmsRecord{Mode: mode, Reason: t.arms.why, CostsFrom: c.Source, OverheadNs: int64(c.overhead()),
		Base: t.costs.record(result.ArmBase), Head: t.costs.record(result.ArmHead), Boots: t.arms.boots}
	if t.arms.warm {
		rec.RebootEvery = c.RebootEvery(t.plan.RebootEvery, t.window())
	}
	return rec
}

// Progress is where the run stands, for the progress line: the first
// pass's points run and at most, the blocks run and planned (0 before
// the first pass is over; fixed once planned), and an estimate of the
// time left that never runs past the budget.
type Progress struct {
	FirstRun, FirstMost      int
	BlocksRun, BlocksPlanned int
	// BlocksClean are the blocks run with both arms clean at the rung
	// being measured: what the blocks planned count.
	BlocksClean int
	// ProfileBlocks are the profiled blocks asked for (COMPARE_PROFILE),
	// which run after the compared ones.
	ProfileBlocks int
	Left          time.Duration
	LeftKnown     bool
}

// Progress is the run's Progress now.
func (t *TwoArm) Progress() Progress {
	p := Progress{FirstRun: t.first.run, FirstMost: t.first.most(), BlocksRun: t.cmp.ran, BlocksPlanned: t.cmp.planned, ProfileBlocks: t.plan.ProfileBlocks}
	if j := t.cmp.out; j >= 0 && j < len(t.cmp.blocks) {
		p.BlocksClean = t.cmp.blocks[j].clean // the rung being measured
	}
	if t.costs.timed == 0 {
		return p
	}
	c := t.costs.now()
	warm := t.arms.warm
	planned := p.BlocksPlanned
	if planned == 0 {
		planned = t.plan.Reps
	}
	left := c.fixed(Ahead{FirstLeft: t.first.left(), Booted: len(t.arms.upArms()) == 2, Turn: !t.first.over}, t.plan.First, warm, t.plan.Duet)
	rungs := max(1, len(t.cmp.rungs))
	left += time.Duration(max(0, planned*rungs-t.cmp.ran)) * c.perBlock(t.window(), warm, t.plan.Duet, t.plan.RebootEvery)
	if t.plan.Budget > 0 {
		left = min(left, max(0, t.plan.Budget-t.elapsed))
	}
	p.Left, p.LeftKnown = left, true
	return p
}

// Total is the points the run plans, as the partial reason of an
// interrupted run counts them: the first pass (at most, while it runs)
// and two per block planned at each compared rung (COMPARE_REPS at
// every batch's, or the headline's, before the rungs are known).
func (t *TwoArm) Total() int {
	first, rungs, blocks := t.first.run, len(t.cmp.rungs), t.cmp.planned
	if !t.first.over {
		first = t.first.most()
		rungs = len(t.plan.Batches)
		if t.plan.Scope == result.ScopeHeadline {
			rungs = 1
		}
	}
	if !t.cmp.isPlanned {
		blocks = t.plan.Reps
	}
	return first + 2*blocks*rungs
}

// MinBlocks is the fewest clean blocks the paired test needs at alpha.
func MinBlocks(alpha float64) int { return stats.MinPairs(alpha) }

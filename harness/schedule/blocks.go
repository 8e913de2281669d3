package schedule

import (
	"fmt"
	"math"
	"time"

	"github.com/ceiling-bench/ceiling/internal/stats"
	"github.com/ceiling-bench/ceiling/result"
)

// comparePhase is the blocks at the compared rungs.
type comparePhase struct {
	started bool // the first pass is over and the rungs are chosen
	rungs   []result.PointKey
	skipped []string
	blocks  []rungBlocks // per rung
	j       int          // the next rung to look at in this round
	active  bool         // a rung ran a block in this round
	out     int          // the rung whose block is being measured; -1: none

	planned   int  // the blocks planned per rung (Reps, or what the budget buys)
	isPlanned bool // planned is set
	ran       int  // compare blocks that ended
	sinceBoot int  // compare blocks since warm arms were last booted afresh
	spent     bool // the budget left no room for another block
}

// rungBlocks is one compared rung's record.
type rungBlocks struct {
	ran, clean int
	d          []float64 // ln(head/base) of the clean blocks
	decided    bool
	ended      *result.Ended // how the rung's blocks ended; nil while they run
}

func (c *comparePhase) start(f firstPass, p TwoArmPlan) {
	c.started = true
	c.rungs, c.skipped = f.rungs()
	c.blocks = make([]rungBlocks, len(c.rungs))
}

// planBlocks settles the blocks per rung once the first pass is over:
// Reps, or under a budget what the time left buys at the costs measured
// so far (capped at MaxReps), with what is ahead of the blocks. A budget that cannot buy the blocks the
// paired test needs ends every rung, saying what budget would.
func (t *TwoArm) planBlocks(ahead Ahead) {
	c, p := &t.cmp, t.plan
	c.planned = p.Reps
	if p.Budget <= 0 || len(c.rungs) == 0 {
		return
	}
	costs := t.costs.now()
	n, needed := t.blocksAt(t.window(), ahead)
	if p.MaxReps > 0 {
		n = min(n, p.MaxReps)
	}
	c.planned = n
	if n >= MinBlocks(p.Alpha) {
		return
	}
	per := costs.perBlock(t.window(), t.arms.warm, p.Duet, p.RebootEvery)
	text := fmt.Sprintf("COMPARE_BUDGET %s cannot buy the %d blocks the paired test needs: the first pass took %s, and %d blocks take %s more at %s each (costs %s); a budget of %s would buy them",
		p.Budget, MinBlocks(p.Alpha), roundSecond(t.elapsed), MinBlocks(p.Alpha), roundSecond(needed), roundCost(per), costs.Source, roundSecond(t.elapsed+needed).Round(10*time.Second))
	for j := range c.blocks {
		c.blocks[j].ended = &result.Ended{Kind: result.EndNoTime, Text: text, NeedBudgetNs: int64(roundSecond(t.elapsed + needed).Round(10 * time.Second))}
	}
	c.spent = true
}

// blocksAt is how many blocks a rung gets from the time the budget has
// left at window w, the profiled blocks' reserve taken out, with what is
// ahead of the blocks; and how long the blocks the paired test needs at
// every rung would take.
func (t *TwoArm) blocksAt(w Window, ahead Ahead) (n int, needed time.Duration) {
	p, rungs := t.plan, len(t.cmp.rungs)
	costs := t.costs.now()
	left := p.Budget - t.elapsed
	if p.ReserveProfile && p.ProfileUnable == "" {
		left -= time.Duration(p.ProfileBlocks) * costs.Block(w, !t.arms.warm, p.Duet)
	}
	n, needed = costs.Blocks(left, ahead, p.First, w, t.arms.warm, p.Duet, p.RebootEvery, MinBlocks(p.Alpha)*rungs)
	return n / rungs, needed
}

// nextBlock is the compare phase's next step: a block, or, when a fresh
// start of warm arms is due, their stop (the boot and the block wait in
// the queue); false: the blocks are over (every rung done, or the budget
// has no room for another).
func (t *TwoArm) nextBlock() (Step, bool) {
	c := &t.cmp
	j, ok := t.pick()
	if !ok {
		return Step{}, false
	}
	reboot := false
	costs := t.costs.now()
	every := 0
	if t.arms.warm {
		every = costs.RebootEvery(t.plan.RebootEvery, t.window())
		reboot = every > 0 && c.sinceBoot >= every
	}
	if t.overBudget(reboot) {
		return Step{}, false
	}
	t.commit(j)
	s := &c.blocks[j]
	k := c.rungs[j]
	key := result.PointKey{Batch: k.Batch, Connections: k.Connections, Rep: s.ran}
	a, b := result.ArmBase, result.ArmHead
	if (s.ran+j)%2 == 1 {
		a, b = b, a
	}
	blk := Block{{Role: result.RoleCompare, Arm: a, Key: key}, {Role: result.RoleCompare, Arm: b, Key: key}}
	if !reboot {
		return t.block(blk, t.window()), true
	}
	c.sinceBoot = 0
	both := []string{result.ArmBase, result.ArmHead}
	stop := t.stopStep(both, fmt.Sprintf("a fresh boot is due after %d blocks (COMPARE_REBOOT_EVERY)", every))
	t.queue = append(t.queue, t.bootStep(both, fmt.Sprintf("fresh servers after %d blocks (COMPARE_REBOOT_EVERY)", every)),
		Step{Kind: RunBlock, Block: blk, Window: t.window(), Warm: true})
	return stop, true
}

// pick is the rung whose block comes next, round-robin over the rungs
// not done; false: none is left.
func (t *TwoArm) pick() (int, bool) {
	c := &t.cmp
	jj, active := c.j, c.active
	for pass := 0; pass < 2; pass++ {
		for jj < len(c.rungs) {
			j := jj
			jj++
			if t.done(&c.blocks[j]) {
				continue
			}
			return j, true
		}
		if !active {
			return 0, false
		}
		jj, active = 0, false
	}
	return 0, false
}

// commit moves the round-robin past rung j, whose block is given.
func (t *TwoArm) commit(j int) {
	c := &t.cmp
	if j < c.j {
		c.active = false // a new round began
	}
	c.j, c.active, c.out = j+1, true, j
}

// most is the most blocks a compared rung runs.
func (t *TwoArm) most() int {
	if t.plan.MaxBlocks > 0 {
		return t.plan.MaxBlocks
	}
	return MaxBlocks(t.cmp.planned)
}

func (t *TwoArm) done(s *rungBlocks) bool {
	need, most := MinBlocks(t.plan.Alpha), t.most()
	end := func(kind, format string, args ...any) bool {
		s.ended = &result.Ended{Kind: kind, Text: fmt.Sprintf(format, args...), Blocks: s.ran, CleanBlocks: s.clean}
		return true
	}
	switch {
	case s.ended != nil:
		return true
	case s.decided:
		return end(result.EndDecided, "decided after %d of the %d blocks planned (%d with both arms clean): the paired test passed look %d's level (COMPARE_STOP=%s)", s.ran, t.cmp.planned, s.clean, s.clean, t.plan.Stop)
	case s.clean >= t.cmp.planned:
		return end(result.EndPlanned, "ran the %d blocks planned with both arms clean (%d run)", s.clean, s.ran)
	case s.ran >= most:
		return end(result.EndMost, "ran the most blocks, %d (%d planned), of which %d with both arms clean", s.ran, t.cmp.planned, s.clean)
	case s.clean+(most-s.ran) < need:
		return end(result.EndFutile, "stopped after %d blocks: even the %d left could not bring the %d with both arms clean to the %d the test needs", s.ran, most-s.ran, s.clean, need)
	}
	return false
}

// overBudget ends every compared rung's blocks when the next block (with
// a fresh start of warm arms before it when one is due, and their final
// stop after it) would end past the budget: the compare blocks' mean
// time so far, or the cost model's before one has ended.
func (t *TwoArm) overBudget(reboot bool) bool {
	p := t.plan
	if p.Budget <= 0 {
		return false
	}
	if t.cmp.spent {
		return true
	}
	costs := t.costs.now()
	block := t.costs.meanBlock(t.arms.warm)
	if block <= 0 {
		block = costs.Block(t.window(), !t.arms.warm, p.Duet)
	}
	need := block
	if reboot {
		need += costs.Reboot()
	}
	if t.arms.warm {
		need += costs.Stop()
	}
	if t.elapsed+need <= p.Budget {
		return false
	}
	t.cmp.spent = true
	for j := range t.cmp.blocks {
		s := &t.cmp.blocks[j]
		if s.ended == nil && !t.done(s) {
			s.ended = &result.Ended{Kind: result.EndBudget, Blocks: s.ran, CleanBlocks: s.clean,
				Text: fmt.Sprintf("COMPARE_BUDGET %s spent after %d blocks, %d of the %d planned with both arms clean: %s run, and the next block would take %s",
					p.Budget, s.ran, s.clean, t.cmp.planned, roundSecond(t.elapsed), roundCost(need))}
		}
	}
	return true
}

// observeBlock takes in a compare block's two points.
func (t *TwoArm) observeBlock(last []Observed) {
	c := &t.cmp
	if c.out < 0 {
		return
	}
	c.ran++
	c.sinceBoot++
	s := &c.blocks[c.out]
	c.out = -1
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
	reps, alpha := c.planned, t.plan.Alpha
	if t.plan.Stop != result.StopFixed && s.clean >= stats.MinPairs(alpha) && s.clean < reps {
		s.decided = stats.SignedRank(s.d) < result.SequentialLevel(t.plan.Stop, s.clean, reps, alpha)
	}
}

// measured: a compare repeat that counts, in the curve and clean.
func (o Observed) measured() bool { return !o.Lost && o.Clean }

// roundSecond is d to the second.
func roundSecond(d time.Duration) time.Duration { return d.Round(time.Second) }

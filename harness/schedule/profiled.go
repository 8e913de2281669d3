package schedule

import (
	"fmt"
	"time"

	"github.com/ceiling-bench/ceiling/result"
)

// Profiled blocks (COMPARE_PROFILE, docs/compare.md "Why is it
// slower"): when the compared rungs' blocks are over and the headline's
// verdict asks for it (TwoArmPlan.WantsProfile), ProfileBlocks more
// blocks at the headline's rung, role result.RoleProfile, each point
// profiled; they are not compared, so profiling never perturbs the
// blocks that decided. Under a budget they run only where all of them
// fit; where they do not, ProfileWhy says so.

// profileState is the profiled blocks' progress.
type profileState struct {
	asked bool   // they were decided on
	given int    // blocks given
	ran   int    // blocks that ended
	why   string // why none ran, when asked and none fit
}

// nextProfiled is the next profiled block; false when none is due.
func (t *TwoArm) nextProfiled() (Step, bool) {
	p, ps := t.plan, &t.profile
	if p.WantsProfile == nil || p.ProfileBlocks <= 0 || len(t.cmp.rungs) == 0 {
		return Step{}, false
	}
	if !ps.asked {
		ps.asked = true
		if !p.WantsProfile(t.verdict) {
			ps.given = p.ProfileBlocks // none is due
			return Step{}, false
		}
		if p.ProfileUnable != "" {
			// Blocks whose every profile would fail spend time for
			// nothing: none runs, and the diff says why.
			ps.why = "no profile taken: " + p.ProfileUnable
			ps.given = p.ProfileBlocks
			t.notes = append(t.notes, "profile: "+ps.why)
			return Step{}, false
		}
		costs := t.costs.now()
		block := t.costs.meanBlock(t.arms.warm) // as the blocks ran
		if block <= 0 {
			block = costs.Block(t.window(), !t.arms.warm, p.Duet)
		}
		need := time.Duration(p.ProfileBlocks) * block
		if t.arms.warm {
			need += costs.Stop()
		}
		if p.Budget > 0 && t.elapsed+need > p.Budget {
			ps.why = fmt.Sprintf("the %d profiled blocks (%s) did not fit COMPARE_BUDGET %s: %s run", p.ProfileBlocks, roundSecond(need), p.Budget, roundSecond(t.elapsed))
			ps.given = p.ProfileBlocks // none will run
			t.notes = append(t.notes, "profile: "+ps.why)
			return Step{}, false
		}
	}
	if ps.given >= p.ProfileBlocks {
		return Step{}, false
	}
	k := t.headlineRung()
	key := result.PointKey{Batch: k.Batch, Connections: k.Connections, Rep: ps.given}
	a, b := result.ArmBase, result.ArmHead
	if ps.given%2 == 1 {
		a, b = b, a
	}
	ps.given++
	blk := Block{{Role: result.RoleProfile, Arm: a, Key: key}, {Role: result.RoleProfile, Arm: b, Key: key}}
	return t.block(blk, t.window()), true
}

// headlineRung is the compared rung of the headline batch, or the first.
func (t *TwoArm) headlineRung() result.PointKey {
	for _, k := range t.cmp.rungs {
		if k.Batch == t.plan.HeadlineBatch {
			return k
		}
	}
	return t.cmp.rungs[0]
}

// ProfileWhy is why no profiled block ran though the verdict asked for
// them ("": they ran, or none was asked).
func (t *TwoArm) ProfileWhy() string { return t.profile.why }

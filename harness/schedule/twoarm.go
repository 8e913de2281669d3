package schedule

import (
	"math"

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
}

// blocks is one compared rung's record.
type blocks struct {
	ran, clean int
	d          []float64 // ln(head/base) of the clean blocks
	decided    bool
}

// NewTwoArm is the schedule of a two-arm sweep planned as p.
func NewTwoArm(p TwoArmPlan) *TwoArm {
	return &TwoArm{plan: p, first: FirstPassOrder(p.Order), out: -1}
}

// FirstPass is how many points the first pass runs.
func (t *TwoArm) FirstPass() int { return len(t.first) }

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
	if t.at+1 < len(t.first) {
		a, b := t.first[t.at], t.first[t.at+1]
		t.at += 2
		return Block{{Role: result.RoleSweep, Arm: a.Arm, Key: a.Key}, {Role: result.RoleSweep, Arm: b.Arm, Key: b.Key}}, true
	}
	if !t.compared {
		t.compared = true
		t.rungs, t.skipped = CompareRungs(t.seen, t.plan.Batches)
		t.blocks = make([]blocks, len(t.rungs))
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

func (t *TwoArm) done(s *blocks) bool {
	need, most := stats.MinPairs(t.plan.Alpha), MaxBlocks(t.plan.Reps)
	return s.decided || s.clean >= t.plan.Reps || s.ran >= most || s.clean+(most-s.ran) < need
}

func (t *TwoArm) observe(last []Observed) {
	if !t.compared {
		t.seen = append(t.seen, last...)
		return
	}
	if t.out < 0 {
		return
	}
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

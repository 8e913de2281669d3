package harness

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/stats"
	"github.com/ceiling-bench/ceiling/result"
)

// The two-arm sweep (docs/compare.md): base and head measured in one run,
// on the same machine, pinning and generator, so the comparison does not
// rest on two runners or two days.
//
//  1. First pass: every (batch, connections) of the ladders once per arm,
//     short points (DURATION, WARMUP), the arms alternating which goes
//     first from one key to the next, in the usual interleaved order. It
//     finds each batch size's rung to compare (CompareRungs).
//  2. Compare phase: COMPARE_REPS repeats per arm at those rungs
//     (COMPARE_DURATION, COMPARE_WARMUP), in CompareSchedule's order: the
//     arms innermost in a balanced ABBA order, the compared points
//     round-robin, so a drift of the machine spreads over both arms and
//     every batch size instead of landing on one.
//
// The curve holds both arms' points; Summarize gives the head arm's
// ceilings and headline, and the comparison (DecideComparison). The
// headline gates; the other compared points are reported.

// ArmPoint is one point of a two-arm schedule.
type ArmPoint struct {
	Arm string
	Key result.PointKey
}

// FirstPassOrder is the first pass: Order's interleaved keys, each run by
// both arms, which arm goes first alternating from key to key (base first
// on the first key), so neither arm always follows the other.
func FirstPassOrder(keys []result.PointKey) []ArmPoint {
	out := make([]ArmPoint, 0, 2*len(keys))
	for i, k := range keys {
		a, b := result.ArmBase, result.ArmHead
		if i%2 == 1 {
			a, b = b, a
		}
		out = append(out, ArmPoint{a, k}, ArmPoint{b, k})
	}
	return out
}

// CompareSchedule is the compare phase: for rep 0..reps-1, every compared
// point in turn (round-robin), and at each the two arms, base first when
// rep + its position is even and head first otherwise. Each point thus
// sees AB, BA, AB, ... (ABBA order), and consecutive points alternate too.
func CompareSchedule(points []result.PointKey, reps int) []ArmPoint {
	var out []ArmPoint
	for rep := 0; rep < reps; rep++ {
		for j, p := range points {
			k := result.PointKey{Batch: p.Batch, Connections: p.Connections, Rep: rep}
			a, b := result.ArmBase, result.ArmHead
			if (rep+j)%2 == 1 {
				a, b = b, a
			}
			out = append(out, ArmPoint{a, k}, ArmPoint{b, k})
		}
	}
	return out
}

// CompareRungs picks each batch size's rung to compare from the first
// pass (the curve's points with role sweep), in batch ladder order: the
// rung where both arms ran clean with the highest mean throughput of the
// two (the ceiling rung of the pair); failing that the head's highest
// clean rung, then the base's. A batch where neither arm ran clean is left
// out and named in skipped.
func CompareRungs(curve []result.Point, batches knob.Ladder) (rungs []result.PointKey, skipped []string) {
	for _, b := range batches {
		best := map[string]map[int]float64{result.ArmBase: {}, result.ArmHead: {}}
		var conns []int // clean rungs, in the order first run
		for _, p := range curve {
			if p.Role != result.RoleSweep || p.Batch != b || !p.Clean || best[p.Arm] == nil {
				continue
			}
			if !slices.Contains(conns, p.Connections) {
				conns = append(conns, p.Connections)
			}
			best[p.Arm][p.Connections] = max(best[p.Arm][p.Connections], p.ThroughputPerS)
		}
		pick, found := 0, false
		var top float64
		for _, c := range conns {
			bv, okB := best[result.ArmBase][c]
			hv, okH := best[result.ArmHead][c]
			if okB && okH && (!found || (bv+hv)/2 > top) {
				pick, top, found = c, (bv+hv)/2, true
			}
		}
		for _, arm := range []string{result.ArmHead, result.ArmBase} {
			if found {
				break
			}
			for _, c := range conns {
				if v, ok := best[arm][c]; ok && (!found || v > top) {
					pick, top, found = c, v, true
				}
			}
			if found {
				skipped = append(skipped, fmt.Sprintf("comparison: batch %d has no rung where both arms ran clean in the first pass: compared at the %s's ceiling rung (%d connections)", b, arm, pick))
			}
		}
		if !found {
			skipped = append(skipped, fmt.Sprintf("comparison: batch %d not compared: neither arm ran clean at any rung of the first pass", b))
			continue
		}
		rungs = append(rungs, result.PointKey{Batch: b, Connections: pick})
	}
	return rungs, skipped
}

// SweepTwoArm runs a two-arm sweep with runner (which boots the base for
// ArmBase points and the head otherwise), filling r as Sweep does. Its
// errors are Sweep's: ErrInterrupted with a partial r, ErrNoCleanHeadline
// when the head arm has no clean point at the headline batch (the
// comparison cannot be made: exit 1).
func SweepTwoArm(ctx context.Context, o *Plan, runner PointRunner, r *result.Result, progress io.Writer, th verdict.Thresholds) error {
	r.SchemaVersion = result.SchemaVersion
	r.Config = ConfigOf(&o.Options)
	r.Config.CompareReps, r.Config.Alpha, r.Config.CompareStop = o.CompareReps, o.Alpha, o.CompareStop
	r.Config.CompareDurationNs, r.Config.CompareWarmupNs = int64(o.CompareDuration), int64(o.CompareWarmup)
	r.Config.CompareMode = knob.ModeInterleaved
	if Halves(&o.Options) != nil {
		r.Config.CompareMode = knob.ModeDuet
	}
	r.Regime = result.Regime(o.Scenario, o.HeadlineBatch, o.RecordSize, len(o.ServerCPUs), len(o.GeneratorCPUs))
	r.Notes = slices.Clone(o.Notes)
	first := FirstPassOrder(r.Config.Order)
	// The compare phase's size is known after the first pass; until
	// then count one compared rung per batch.
	total := len(first) + 2*o.CompareReps*len(o.BatchLadder)
	load := time.Duration(len(first))*(o.Warmup+o.Duration) + time.Duration(2*o.CompareReps*len(o.BatchLadder))*(o.CompareWarmup+o.CompareDuration)
	PlanLine(progress, total, fmt.Sprintf("a first pass of %d, both arms; then %d repeats per arm at one compared point per batch", len(first), o.CompareReps), load)
	start := time.Now()

	halves := Halves(&o.Options)
	// admitted puts a point's outcome in the curve, with its duet half.
	admitted := func(i int, role string, ap ArmPoint, out verdict.Outcome, half *Half) (result.Point, bool) {
		p, ok := admit(r, i, role, ap.Key, ap.Arm, out, th)
		if !ok {
			return p, false
		}
		if half != nil {
			p.Half = half.Name
			r.Curve[len(r.Curve)-1].Half = half.Name
		}
		if p.Status != result.StatusOK {
			fmt.Fprintf(progress, "point %d/%d (%s) failed: %s\n", i, total, ap.Arm, p.FailReason)
		}
		return p, true
	}
	spec := func(i int, role string, ap ArmPoint, window, warmup time.Duration) PointSpec {
		return PointSpec{Index: i, Role: role, Key: ap.Key, Arm: ap.Arm, Duration: window, Warmup: warmup}
	}
	// pair runs a block: a then b, or in a duet a on half a and b on
	// half b at the same time.
	pair := func(role string, a, b ArmPoint, window, warmup time.Duration) (p1, p2 result.Point, ok1, ok2 bool) {
		i := len(r.Curve) + 1
		if halves == nil {
			armProgress(progress, i, total, role, a, "", time.Since(start))
			p1, ok1 = admitted(i, role, a, runner.RunPoint(ctx, spec(i, role, a, window, warmup)), nil)
			if ctx.Err() != nil {
				return p1, p2, ok1, false
			}
			i = len(r.Curve) + 1
			armProgress(progress, i, total, role, b, "", time.Since(start))
			p2, ok2 = admitted(i, role, b, runner.RunPoint(ctx, spec(i, role, b, window, warmup)), nil)
			return p1, p2, ok1, ok2
		}
		gate := NewGate()
		specs := [2]PointSpec{spec(i, role, a, window, warmup), spec(i+1, role, b, window, warmup)}
		var outs [2]verdict.Outcome
		var wg sync.WaitGroup
		for k := range specs {
			specs[k].Half, specs[k].Gate = halves[k], gate
			armProgress(progress, i+k, total, role, []ArmPoint{a, b}[k], halves[k].Name, time.Since(start))
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[k] = runner.RunPoint(ctx, specs[k])
			}()
		}
		wg.Wait()
		p1, ok1 = admitted(i, role, a, outs[0], halves[0])
		p2, ok2 = admitted(len(r.Curve)+1, role, b, outs[1], halves[1])
		return p1, p2, ok1, ok2
	}
	for j := 0; j+1 < len(first); j += 2 {
		if ctx.Err() != nil {
			break
		}
		pair(result.RoleSweep, first[j], first[j+1], 0, 0)
	}
	r.Summarize()
	if ctx.Err() == nil {
		rungs, skipped := CompareRungs(r.Curve, o.BatchLadder)
		for _, s := range skipped {
			r.Warn(s)
		}
		total = len(first) + 2*o.CompareReps*len(rungs)
		compareBlocks(ctx, rungs, o.CompareReps, o.Alpha, o.CompareStop, func(a, b ArmPoint) (result.Point, result.Point, bool, bool) {
			return pair(result.RoleCompare, a, b, o.CompareDuration, o.CompareWarmup)
		}, func(extra int) { total += extra })
	}
	r.Summarize()
	return finish(ctx, r, total)
}

// MaxBlocks is the most blocks the compare phase runs at one point for
// reps asked: a block that lost a repeat (contended, failed, not clean)
// is run again, up to twice the blocks asked in all.
func MaxBlocks(reps int) int { return 2 * reps }

// compareBlocks is the compare phase: at every compared point, blocks of
// one repeat per arm, the points round-robin and each point's blocks in
// ABBA order (CompareSchedule's order while nothing is lost). A point is
// done when reps of its blocks have both repeats clean, or when a
// sequential rule (stop) finds its paired test decided at this look
// (SequentialLevel), or when it has run MaxBlocks, or when even all the
// blocks left could not bring it to the pairs its test needs
// (stats.MinPairs). A block that lost a repeat is run again, keeping the
// order: its rep is the point's next. grow is told of each block added
// beyond the reps asked (for the progress line).
func compareBlocks(ctx context.Context, rungs []result.PointKey, reps int, alpha float64, stop string, pair func(a, b ArmPoint) (p1, p2 result.Point, ok1, ok2 bool), grow func(extra int)) {
	type state struct {
		ran, clean int
		d          []float64 // ln(head/base) of the clean blocks
		decided    bool
	}
	st := make([]state, len(rungs))
	need, most := stats.MinPairs(alpha), MaxBlocks(reps)
	done := func(s state) bool {
		return s.decided || s.clean >= reps || s.ran >= most || s.clean+(most-s.ran) < need
	}
	for {
		active := false
		for j, k := range rungs {
			if ctx.Err() != nil {
				return
			}
			s := &st[j]
			if done(*s) {
				continue
			}
			active = true
			if s.ran >= reps {
				grow(2)
			}
			key := result.PointKey{Batch: k.Batch, Connections: k.Connections, Rep: s.ran}
			a, b := result.ArmBase, result.ArmHead
			if (s.ran+j)%2 == 1 {
				a, b = b, a
			}
			p1, p2, ok1, ok2 := pair(ArmPoint{a, key}, ArmPoint{b, key})
			if ctx.Err() != nil {
				return
			}
			s.ran++
			if !ok1 || !ok2 || !result.CleanRepeat(&p1) || !result.CleanRepeat(&p2) {
				continue
			}
			s.clean++
			base, head := p1, p2
			if base.Arm != result.ArmBase {
				base, head = p2, p1
			}
			s.d = append(s.d, math.Log(head.ThroughputPerS/base.ThroughputPerS))
			if stop != result.StopFixed && s.clean >= need && s.clean < reps {
				s.decided = stats.SignedRank(s.d) < result.SequentialLevel(stop, s.clean, reps, alpha)
			}
		}
		if !active {
			return
		}
	}
}

// armProgress is Progress's line for a two-arm point.
func armProgress(w io.Writer, i, n int, role string, ap ArmPoint, half string, elapsed time.Duration) {
	eta := "?"
	if i > 1 {
		eta = fmtDur(elapsed / time.Duration(i-1) * time.Duration(n-i+1))
	}
	phase := "first pass"
	if role == result.RoleCompare {
		phase = "compare"
	}
	if half != "" {
		phase += ", duet half " + half
	}
	k := ap.Key
	fmt.Fprintf(w, "point %d/%d: %s, batch %d, %d connections, rep %d (%s) | elapsed %s, eta %s\n",
		i, n, ap.Arm, k.Batch, k.Connections, k.Rep, phase, fmtDur(elapsed), eta)
}

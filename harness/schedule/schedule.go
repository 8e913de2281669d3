package schedule

import (
	"time"

	"github.com/ceiling-bench/ceiling/result"
)

// Point is one point a schedule asks the sweep to measure.
type Point struct {
	// Role is the point's role in the curve: result.RoleSweep (a ladder
	// or search point, or a two-arm first-pass point), RoleAARepeat,
	// RoleHeadroom, RoleResilience or RoleCompare.
	Role string
	Key  result.PointKey
	// Arm is the server of a two-arm sweep (result.ArmBase, ArmHead);
	// empty: the one target.
	Arm string
	// Step, Phase and Reason place a SEARCH=bisect point on its batch's
	// search path (result.Point's SearchStep, SearchPhase, SearchReason):
	// its 1-based step within its batch and rep, PhaseBracket or
	// PhaseBisect, and why it was chosen. Zero for every other point.
	Step   int
	Phase  string
	Reason string
}

// Observed is what one point measured, as the schedules read it: the
// harness fills it from the judged point (result.Point) and the runner's
// outcome, and hands it back to Next.
type Observed struct {
	// Point is the point as Next gave it.
	Point
	// Lost: the point was interrupted, is no measurement and is not in
	// the curve.
	Lost bool
	// Failed: the point measured nothing (its status is not ok, or the
	// generator left no result). It says nothing about the server.
	Failed bool
	// Good: measured without errors, with every connection open, and
	// meeting the objective when there is one; contention left out (it
	// makes a point unclean, but its throughput still shows the curve's
	// shape). What the search reads.
	Good bool
	// Clean: the point's status is ok and it is clean
	// (result.CleanRepeat): it can be a ceiling, and a compare block's
	// repeat that counts.
	Clean bool
	// Contended: other work or the hypervisor took the point's pinned
	// CPUs (result.Point.Contended): it is not clean for want of CPUs,
	// not for anything the server did, so run again it may be.
	Contended bool
	// ThroughputPerS is the point's throughput.
	ThroughputPerS float64
	// Headline is the curve's headline with this point in it (as
	// result.Result.Summarize gives it): where the A-A repeat, the
	// headroom probe and the resilience point go.
	Headline result.Headline
	// Elapsed is the run's time when the point ended (the harness's
	// clock): what a budget (TwoArmPlan.Budget) is held to.
	Elapsed time.Duration
	// Wall is the point's own time, Load its warm-up and window in it,
	// and ReadyCost and StopCost its server's boot (start to ready) and
	// stop (SIGTERM to exit and free ports) when it booted its own
	// (fresh): what a two-arm schedule plans its time from.
	Wall, Load, ReadyCost, StopCost time.Duration
	// ArmDown: a point measured on a warm arm's server found it exited.
	ArmDown bool
	// Series is the point's timeline (load.Timeline), what a two-arm
	// schedule sizes its blocks' windows from; nil: none.
	Series *Series
}

// Order is the sequence the sweep runs its points in. It interleaves the
// batch sizes — round-robin over the batch ladder, taking each batch's next
// connection rung in turn — so a slow stretch of the machine spreads over
// every batch size instead of reading as the effect of one of them. Reps
// are the outer loop for the same reason: rep 1 of a point is as far from
// rep 0 as the whole sweep allows.
func Order[L ~[]int](batches []int, conns func(batch int) L, reps int) []result.PointKey {
	var order []result.PointKey
	for rep := 0; rep < reps; rep++ {
		for rung := 0; ; rung++ {
			any := false
			for _, b := range batches {
				l := conns(b)
				if rung < len(l) {
					order = append(order, result.PointKey{Batch: b, Connections: l[rung], Rep: rep})
					any = true
				}
			}
			if !any {
				break
			}
		}
	}
	return order
}

package schedule

import (
	"fmt"
	"slices"

	"github.com/ceiling-bench/ceiling/result"
)

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
// pass (the points seen with role sweep, lost ones left out), in batch
// ladder order: the
// rung where both arms ran clean with the highest mean throughput of the
// two (the ceiling rung of the pair); failing that the head's highest
// clean rung, then the base's. A batch where neither arm ran clean is left
// out and named in skipped.
func CompareRungs(seen []Observed, batches []int) (rungs []result.PointKey, skipped []string) {
	for _, b := range batches {
		best := map[string]map[int]float64{result.ArmBase: {}, result.ArmHead: {}}
		var conns []int // clean rungs, in the order first run
		for _, p := range seen {
			if p.Lost || p.Role != result.RoleSweep || p.Key.Batch != b || !p.Clean || best[p.Arm] == nil {
				continue
			}
			if !slices.Contains(conns, p.Key.Connections) {
				conns = append(conns, p.Key.Connections)
			}
			best[p.Arm][p.Key.Connections] = max(best[p.Arm][p.Key.Connections], p.ThroughputPerS)
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

// MaxBlocks is the most blocks the compare phase runs at one point for
// reps asked: a block that lost a repeat (contended, failed, not clean)
// is run again, up to twice the blocks asked in all.
func MaxBlocks(reps int) int { return 2 * reps }

package harness

import (
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/result"
)

// Order is the sequence the sweep runs its points in. It interleaves the
// batch sizes — round-robin over the batch ladder, taking each batch's next
// connection rung in turn — so a slow stretch of the machine spreads over
// every batch size instead of reading as the effect of one of them. Reps
// are the outer loop for the same reason: rep 1 of a point is as far from
// rep 0 as the whole sweep allows.
func Order(batches knob.Ladder, conns func(batch int) knob.Ladder, reps int) []result.PointKey {
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

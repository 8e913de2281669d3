package schedule

import (
	"testing"

	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
)

func TestOrderInterleaves(t *testing.T) {
	conns := map[int][]int{10: {32, 64, 128}, 100: {16, 32}, 4096: {4}}
	got := Order([]int{10, 100, 4096}, func(b int) []int { return conns[b] }, 2)
	k := func(b, c, r int) result.PointKey { return result.PointKey{Batch: b, Connections: c, Rep: r} }
	want := []result.PointKey{
		k(10, 32, 0), k(100, 16, 0), k(4096, 4, 0),
		k(10, 64, 0), k(100, 32, 0),
		k(10, 128, 0),
		k(10, 32, 1), k(100, 16, 1), k(4096, 4, 1),
		k(10, 64, 1), k(100, 32, 1),
		k(10, 128, 1),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Order (-want +got):\n%s", diff)
	}
	// No two consecutive points share a batch while another batch still
	// has rungs left in that round.
	if got[0].Batch == got[1].Batch {
		t.Errorf("first two points share batch %d", got[0].Batch)
	}
}

package agents

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSegmentsSumExactly(t *testing.T) {
	check := func(conns int, rate float64, n int) {
		t.Helper()
		sumC, sumR := 0, 0.0
		for i := range n {
			c, r := Segment(conns, rate, n, i)
			if c < conns/n || c > conns/n+1 {
				t.Fatalf("C=%d N=%d: agent %d got %d connections, want %d or %d", conns, n, i, c, conns/n, conns/n+1)
			}
			if conns > 0 && c > 0 {
				// Every connection the same rate: r_i/c_i = R/C.
				if per, want := r/float64(c), rate/float64(conns); math.Abs(per-want) > 1e-12*max(1, want) {
					t.Fatalf("C=%d R=%v N=%d: agent %d at %v per connection, want %v", conns, rate, n, i, per, want)
				}
			}
			sumC += c
			sumR += r
		}
		if sumC != conns {
			t.Fatalf("C=%d N=%d: connections sum to %d", conns, n, sumC)
		}
		if math.Abs(sumR-rate) > 1e-9*max(1, rate) {
			t.Fatalf("C=%d R=%v N=%d: rates sum to %v", conns, rate, n, sumR)
		}
	}
	for _, tc := range []struct {
		c int
		r float64
		n int
	}{
		{1, 1, 1}, {7, 1000, 3}, {10, 333.3, 3}, {100, 1e6, 7}, {99991, 123456.789, 13}, {2, 0.5, 3}, {0, 0, 4},
		{5, 1, 5}, {1 << 40, 1e9, 97}, {65537, 3, 64},
	} {
		check(tc.c, tc.r, tc.n)
	}
	// Property: many random awkward values.
	rng := rand.New(rand.NewPCG(13, 13))
	for range 20000 {
		n := 1 + rng.IntN(64)
		conns := rng.IntN(1_000_000)
		rate := rng.Float64() * 1e7
		check(conns, rate, n)
	}
}

func TestActive(t *testing.T) {
	for _, tc := range []struct{ n, c, want int }{{3, 100, 3}, {3, 2, 2}, {3, 0, 1}, {1, 5, 1}} {
		if got := Active(tc.n, tc.c); got != tc.want {
			t.Errorf("Active(%d, %d) = %d, want %d", tc.n, tc.c, got, tc.want)
		}
	}
}

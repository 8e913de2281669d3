package stats_test

import (
	"fmt"

	"github.com/ceiling-bench/ceiling/internal/stats"
)

// Five repeats per arm of a compared point (messages per second), head
// about 10% slower than base.
func Example() {
	base := []float64{51200, 50800, 52100, 50500, 51700}
	head := []float64{46100, 45900, 47000, 45200, 46600}

	b, h := stats.Summarize(base, 0.95), stats.Summarize(head, 0.95)
	fmt.Printf("base median %.0f, 95%% CI %v..%v, n=%d\n", b.Median, b.Lo, b.Hi, b.N)
	fmt.Printf("head median %.0f, n=%d\n", h.Median, h.N)

	p := stats.MannWhitneyU(base, head)
	est, lo, hi, ok := stats.ShiftCI(base, head, 0.95)
	fmt.Printf("p = %.4f\n", p)
	if ok {
		fmt.Printf("change %+.1f%% (95%% CI %+.1f%% .. %+.1f%%)\n", (est-1)*100, (lo-1)*100, (hi-1)*100)
	}
	spread := max(stats.RelSpreadPct(base), stats.RelSpreadPct(head))
	fmt.Printf("spread %.1f%%\n", spread)
	fmt.Println("significant after Holm over 3 points:", stats.Holm([]float64{p, 0.2, 0.03}, 0.05))
	// Output:
	// base median 51200, 95% CI -Inf..52100, n=5
	// head median 46100, n=5
	// p = 0.0079
	// change -9.9% (95% CI -11.9% .. -7.7%)
	// spread 1.1%
	// significant after Holm over 3 points: [true false false]
}

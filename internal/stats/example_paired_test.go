package stats_test

import (
	"fmt"
	"math"

	"github.com/ceiling-bench/ceiling/internal/stats"
)

// Eight ABBA pairs of one compared point (messages per second) on a
// machine that slows down during the run, head about 3% slower than base
// within each pair. The drift (50k down to 44k) is wider than the change,
// so the unpaired test, which pools each arm, cannot see it; the paired
// one sees every pair go the same way.
func Example_paired() {
	base := []float64{50100, 49300, 48200, 47600, 46500, 45800, 44900, 44200}
	head := []float64{48500, 47900, 46700, 46300, 45100, 44300, 43700, 42800}

	fmt.Printf("unpaired: p = %.2f\n", stats.MannWhitneyU(base, head))

	d := stats.LogRatios(base, head)
	fmt.Printf("paired:   p = %.4f (the smallest possible with 8 pairs: %.4f)\n",
		stats.SignedRank(d), stats.MinSignedRankP(len(d)))
	est, lo, hi, ok := stats.PairedShiftCI(d, 0.95)
	if ok {
		fmt.Printf("change %+.1f%% (95%% CI %+.1f%% .. %+.1f%%)\n",
			(math.Exp(est)-1)*100, (math.Exp(lo)-1)*100, (math.Exp(hi)-1)*100)
	}
	fmt.Printf("detectable at 80%% power: %.1f%% paired, %.1f%% unpaired\n",
		(math.Exp(stats.PairedMDC(d, 0.05, 0.8))-1)*100,
		(math.Exp(stats.UnpairedMDC(logs(base), logs(head), 0.05, 0.8))-1)*100)
	fmt.Println("pairs needed at alpha 0.05:", stats.MinPairs(0.05))

	// Planned as a sequential run of up to 12 pairs, looking after 6,
	// 8, 10 and 12, it would have stopped at the second look.
	looks := []int{6, 8, 10, 12}
	levels := stats.SequentialLevels(looks, 0.05, stats.SpendOBF)
	for k, l := range levels {
		p := stats.SignedRank(d[:min(looks[k], len(d))])
		fmt.Printf("after %2d pairs: stop if p < %.4f", looks[k], l)
		if looks[k] <= len(d) && p < l {
			fmt.Printf(": p = %.4f, stop", p)
			break
		}
		fmt.Println()
	}
	// Output:
	// unpaired: p = 0.28
	// paired:   p = 0.0078 (the smallest possible with 8 pairs: 0.0078)
	// change -3.0% (95% CI -3.2% .. -2.8%)
	// detectable at 80% power: 0.3% paired, 8.9% unpaired
	// pairs needed at alpha 0.05: 6
	// after  6 pairs: stop if p < 0.0000
	// after  8 pairs: stop if p < 0.0156: p = 0.0078, stop
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

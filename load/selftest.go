package load

import (
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/ceiling-bench/ceiling/load/payload"
)

// SelfTest checks, without a server, the two things every figure rests on:
// the histogram's percentiles against a brute-force sorted reference, and
// the payload generator against its golden vectors. It writes one line per
// check to w and returns the first failure.
func SelfTest(w io.Writer) error {
	for _, dist := range selfTestDistributions() {
		if err := checkHistogram(dist.name, dist.values); err != nil {
			return fmt.Errorf("self-test: histogram: %w", err)
		}
		fmt.Fprintf(w, "ok  histogram %-12s %d values: p50 p90 p99 p99.9 max within 0.1%% of the sorted reference\n", dist.name, len(dist.values))
	}
	n, err := payload.CheckGolden()
	if err != nil {
		return fmt.Errorf("self-test: payload: %w", err)
	}
	fmt.Fprintf(w, "ok  payload   %d golden vectors reproduced byte for byte\n", n)
	return nil
}

type distribution struct {
	name   string
	values []int64
}

// selfTestDistributions are seeded (xorshift below), so a failure is
// reproducible: uniform, a long tail, and a bimodal stall.
func selfTestDistributions() []distribution {
	x := uint64(88172645463325252)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	const n = 100000
	uni, tail, bi := make([]int64, n), make([]int64, n), make([]int64, n)
	for i := 0; i < n; i++ {
		u := float64(next()%1_000_000+1) / 1_000_000
		uni[i] = int64(10_000 + next()%990_000)
		tail[i] = int64(20_000 / math.Pow(u, 1.5)) // Pareto-like
		if next()%100 < 3 {
			bi[i] = int64(300_000_000 + next()%10_000_000)
		} else {
			bi[i] = int64(50_000 + next()%10_000)
		}
	}
	return []distribution{{"uniform", uni}, {"long-tail", tail}, {"bimodal", bi}}
}

// checkHistogram records values into several worker histograms, merges
// them (as a run does) and compares against the sorted values using hdr's
// rank rule: the value at rank max(1, round(q/100*n)).
func checkHistogram(name string, values []int64) error {
	const workers = 4
	parts := make([]*Histogram, workers)
	for i := range parts {
		parts[i] = NewHistogram()
	}
	for i, v := range values {
		parts[i%workers].Record(v)
	}
	h := NewHistogram()
	for _, p := range parts {
		h.Merge(p)
	}
	sorted := append([]int64(nil), values...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	if h.Count() != int64(len(sorted)) {
		return fmt.Errorf("%s: count %d, want %d", name, h.Count(), len(sorted))
	}
	if h.Latency().Max != sorted[len(sorted)-1] || h.Latency().Min != sorted[0] {
		return fmt.Errorf("%s: min/max %d/%d, want %d/%d", name, h.Latency().Min, h.Latency().Max, sorted[0], sorted[len(sorted)-1])
	}
	for _, q := range []float64{50, 90, 99, 99.9, 100} {
		rank := int(q/100*float64(len(sorted)) + 0.5)
		if rank < 1 {
			rank = 1
		}
		want := sorted[rank-1]
		got := h.Quantile(q)
		if math.Abs(float64(got-want)) > float64(want)/1000+1 {
			return fmt.Errorf("%s: p%g = %d, reference %d (more than 0.1%% apart)", name, q, got, want)
		}
	}
	return nil
}

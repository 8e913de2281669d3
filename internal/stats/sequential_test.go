package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSpend(t *testing.T) {
	for _, c := range []struct {
		name  string
		f     func(t, alpha float64) float64
		t     float64
		alpha float64
		want  float64
	}{
		// 2 - 2*Phi(1.959964/sqrt(t)), by Python's statistics.NormalDist.
		{"OBF", SpendOBF, 0.5, 0.05, 0.0055746},
		{"OBF", SpendOBF, 0.25, 0.05, 0.0000886},
		{"OBF", SpendOBF, 0.75, 0.05, 0.0236251},
		{"OBF", SpendOBF, 0.5, 0.01, 0.0002697},
		// 0.05 * ln(1 + 1.718282*t).
		{"Pocock", SpendPocock, 0.5, 0.05, 0.0310057},
		{"Pocock", SpendPocock, 0.25, 0.05, 0.0178687},
		{"Pocock", SpendPocock, 0.5, 0.01, 0.0062011},
	} {
		if got := c.f(c.t, c.alpha); math.Abs(got-c.want) > 1e-7 {
			t.Errorf("Spend%s(%v, %v) = %.7f, want %v", c.name, c.t, c.alpha, got, c.want)
		}
	}
	for _, f := range []func(t, alpha float64) float64{SpendOBF, SpendPocock} {
		for _, alpha := range []float64{0.05, 0.01, 0.1} {
			if f(0, alpha) != 0 || f(-1, alpha) != 0 || f(1, alpha) != alpha || f(2, alpha) != alpha {
				t.Errorf("spending at t = 0, -1, 1, 2: %v %v %v %v, want 0 0 %v %v",
					f(0, alpha), f(-1, alpha), f(1, alpha), f(2, alpha), alpha, alpha)
			}
			// Continuous at 1, increasing in between.
			if got := f(1-1e-9, alpha); math.Abs(got-alpha) > 1e-8 {
				t.Errorf("spending just below t = 1: %v, want about %v", got, alpha)
			}
			prev := 0.0
			for i := 1; i <= 100; i++ {
				s := f(float64(i)/100, alpha)
				if !(s > prev) || s > alpha {
					t.Errorf("spending at t = %v: %v after %v (alpha %v)", float64(i)/100, s, prev, alpha)
				}
				prev = s
			}
		}
	}
	// Pocock spends more early, O'Brien-Fleming keeps it for the end.
	if !(SpendPocock(0.3, 0.05) > SpendOBF(0.3, 0.05)) {
		t.Errorf("SpendPocock(0.3) = %v, not above SpendOBF(0.3) = %v", SpendPocock(0.3, 0.05), SpendOBF(0.3, 0.05))
	}
}

// TestNoTiePValues checks that the p-value table SequentialLevels uses is
// SignedRank's p, bit for bit, for continuous samples exact and normal
// (beyond 50), and that it rises with m.
func TestNoTiePValues(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for n := 1; n <= 60; n++ {
		ps := noTiePValues(n)
		for m := 1; m < len(ps); m++ {
			if !(ps[m] > ps[m-1] || ps[m] == 1) {
				t.Fatalf("noTiePValues(%d) falls or stalls below 1 at m = %d: %v, %v", n, m, ps[m-1], ps[m])
			}
		}
		if ps[0] != MinSignedRankP(n) && n <= signedRankExactLimit {
			t.Errorf("noTiePValues(%d)[0] = %v, want MinSignedRankP %v", n, ps[0], MinSignedRankP(n))
		}
		for range 20 {
			d := signedSample(r, n, false)
			_, twoW := signedRanks(d)
			w := twoW / 2
			m := min(w, n*(n+1)/2-w)
			if got := SignedRank(d); got != ps[m] {
				t.Errorf("n = %d, W+ = %d: SignedRank %v, table %v", n, w, got, ps[m])
			}
		}
	}
}

// TestSimulateSignedRanks checks the Monte Carlo's incremental W+
// against W+ recomputed from scratch, replaying the same random stream,
// and the distribution it draws against the exact null distribution.
func TestSimulateSignedRanks(t *testing.T) {
	// Up to 64 pairs (bit sets), and beyond (Fenwick trees, more than
	// one word of signs).
	for _, looks := range [][]int{{1, 3, 7, 10, 64}, {1, 3, 7, 10, 64, 70}} {
		replaySimulation(t, looks)
	}

	// The marginal law at each look is the exact null distribution.
	looks := []int{1, 2, 5, 8, 12, 20}
	const many = 100000
	ms := simulateSignedRanks(looks, many, rand.New(rand.NewPCG(45, 46)))
	for k, n := range looks {
		counts := noTieCounts(n)
		M := n * (n + 1) / 2
		hist := make([]int, M/2+1)
		for i := range many {
			hist[ms[i*len(looks)+k]]++
		}
		for m, h := range hist {
			p := 2 * counts[m] / math.Ldexp(1, n)
			if 2*m == M {
				p /= 2
			}
			if se := math.Sqrt(p * (1 - p) / many); math.Abs(float64(h)/many-p) > 5*se+1e-9 {
				t.Errorf("%d pairs: P(min(W+, W-) = %d) simulated %v, exact %v", n, m, float64(h)/many, p)
			}
		}
	}
}

func TestSequentialLevels(t *testing.T) {
	for _, c := range []struct {
		looks []int
		alpha float64
		spend func(t, alpha float64) float64
	}{
		{nil, 0.05, SpendOBF},
		{[]int{}, 0.05, SpendOBF},
		{[]int{0, 5}, 0.05, SpendOBF},
		{[]int{5, 5}, 0.05, SpendOBF},
		{[]int{10, 5}, 0.05, SpendOBF},
		{[]int{5, 10}, 0, SpendOBF},
		{[]int{5, 10}, 1, SpendOBF},
		{[]int{5, 10}, math.NaN(), SpendOBF},
		{[]int{5, 10}, 0.05, nil},
	} {
		if got := SequentialLevels(c.looks, c.alpha, c.spend); got != nil {
			t.Errorf("SequentialLevels(%v, %v) = %v, want nil", c.looks, c.alpha, got)
		}
	}

	// One look is the fixed-size test: p < level exactly when p < alpha.
	for _, c := range []struct {
		n         int
		alpha     float64
		largestOK float64 // the largest attainable p below alpha
	}{{8, 0.05, 10.0 / 256}, {6, 0.05, 1.0 / 32}, {10, 0.01, 10.0 / 1024}, {5, 0.05, 0}} {
		got := SequentialLevels([]int{c.n}, c.alpha, SpendOBF)
		want := 0.0
		if c.largestOK > 0 {
			want = math.Nextafter(c.largestOK, 2)
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("SequentialLevels({%d}, %v) = %v, want [%v]", c.n, c.alpha, got, want)
		}
	}

	for _, looks := range [][]int{{10, 20}, {5, 10, 15, 20}, {6, 8, 10, 12, 14, 16, 18, 20}, {4, 8, 12}, {20, 30, 40, 50, 60}} {
		for _, alpha := range []float64{0.05, 0.01} {
			for _, sp := range []struct {
				name string
				f    func(t, alpha float64) float64
			}{{"OBF", SpendOBF}, {"Pocock", SpendPocock}} {
				levels := SequentialLevels(looks, alpha, sp.f)
				if len(levels) != len(looks) {
					t.Fatalf("SequentialLevels(%v, %v, %s) = %v", looks, alpha, sp.name, levels)
				}
				t.Logf("%s alpha %v looks %v: levels %.5f", sp.name, alpha, looks, levels)
				nmax := looks[len(looks)-1]
				first := true // no earlier look can stop
				for k, n := range looks {
					spent := sp.f(float64(n)/float64(nmax), alpha)
					l := levels[k]
					if l == 0 {
						if first && MinSignedRankP(n) <= spent {
							t.Errorf("%s %v: look %d (%d pairs) cannot stop, though its smallest p %v is well within %v",
								sp.name, looks, k, n, MinSignedRankP(n), spent)
						}
						continue
					}
					// A level is just above an attainable p
					// within the spent alpha.
					p := math.Nextafter(l, 0)
					if !slices.Contains(noTiePValues(n), p) || p > spent {
						t.Errorf("%s %v: level %v at %d pairs is not just above an attainable p within %v", sp.name, looks, l, n, spent)
					}
					if MinSignedRankP(n) > spent {
						t.Errorf("%s %v: look at %d pairs stops though its smallest p exceeds %v", sp.name, looks, n, spent)
					}
					// The first look that can stop has the
					// largest attainable p within its spent alpha.
					if first {
						ps := noTiePValues(n)
						if i := slices.Index(ps, p); i+1 < len(ps) && ps[i+1] <= spent {
							t.Errorf("%s %v: first level %v at %d pairs, but %v is within %v too", sp.name, looks, l, n, ps[i+1], spent)
						}
					}
					first = false
				}
				if last := levels[len(levels)-1]; !(last > 0 && last < alpha) {
					t.Errorf("%s %v alpha %v: last level %v, want in (0, alpha)", sp.name, looks, alpha, last)
				}
				if sp.name == "OBF" && !slices.IsSorted(levels) {
					t.Errorf("OBF %v alpha %v: levels %v not non-decreasing", looks, alpha, levels)
				}
			}
		}
	}

	// Deterministic, cached, and the caller's copy is its own.
	a := SequentialLevels([]int{6, 12, 18}, 0.05, SpendOBF)
	want := slices.Clone(a)
	a[2] = 0.5
	if b := SequentialLevels([]int{6, 12, 18}, 0.05, SpendOBF); !slices.Equal(b, want) {
		t.Errorf("SequentialLevels changed between calls: %v, then %v", want, b)
	}
	seqCache.Lock()
	clear(seqCache.levels)
	seqCache.Unlock()
	if b := SequentialLevels([]int{6, 12, 18}, 0.05, SpendOBF); !slices.Equal(b, want) {
		t.Errorf("SequentialLevels not deterministic: %v, then %v", want, b)
	}
	// The key is the spent alphas, not the function: a closure that
	// spends differently gets its own levels.
	half := func(t, alpha float64) float64 { return SpendOBF(t, alpha) / 2 }
	if b := SequentialLevels([]int{6, 12, 18}, 0.05, half); slices.Equal(b, want) {
		t.Errorf("a spending function with half the alpha got the same levels %v", b)
	}
	// Looks whose spent alpha is NaN or negative cannot stop.
	odd := func(t, alpha float64) float64 {
		if t < 1 {
			return math.NaN()
		}
		return alpha
	}
	if b := SequentialLevels([]int{10, 20}, 0.05, odd); len(b) != 2 || b[0] != 0 || !(b[1] > 0.04) {
		t.Errorf("SequentialLevels with a NaN spend = %v, want [0 ~0.05]", b)
	}

	// Every look from 1 to 20 pairs, not cached (an alpha no other test
	// uses). How fast that is, is BenchmarkSequentialLevels': a unit test
	// asserts no speed (a busy machine made this one take 2 s).
	if levels := SequentialLevels(everyLook, 0.0499, SpendOBF); len(levels) != 20 {
		t.Errorf("SequentialLevels over 20 looks gave %d levels", len(levels))
	}
}

var everyLook = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}

// BenchmarkSequentialLevels: planning a sequential test on the fly, every
// look from 1 to 20 pairs, uncached (a new alpha each time).
func BenchmarkSequentialLevels(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		SequentialLevels(everyLook, 0.04+float64(i%1000)*1e-6, SpendOBF)
	}
}

// TestSequentialFalseAlarm runs the sequential test as a caller would, on
// fresh seeded normal differences (not the Monte Carlo's signs and
// orders) under the null hypothesis, with SignedRank at every look: the
// false-alarm rate by each look must stay within its spent alpha, and over
// the run within alpha, up to 3 standard errors of this simulation.
func TestSequentialFalseAlarm(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	const sims = 10000
	for _, c := range []struct {
		name  string
		looks []int
		spend func(t, alpha float64) float64
	}{
		{"OBF", []int{5, 10, 15, 20}, SpendOBF},
		{"Pocock", []int{6, 8, 10, 12, 14, 16}, SpendPocock},
		{"OBF", []int{8, 12, 16}, SpendOBF},
	} {
		const alpha = 0.05
		levels := SequentialLevels(c.looks, alpha, c.spend)
		nmax := c.looks[len(c.looks)-1]
		stopped := make([]int, len(c.looks)) // cumulative, by look
		d := make([]float64, nmax)
		for range sims {
			for i := range d {
				d[i] = r.NormFloat64() * 0.05 // a 5% noise of log ratios
			}
			for k, n := range c.looks {
				if SignedRank(d[:n]) < levels[k] {
					for j := k; j < len(c.looks); j++ {
						stopped[j]++
					}
					break
				}
			}
		}
		for k, n := range c.looks {
			spent := c.spend(float64(n)/float64(nmax), alpha)
			rate := float64(stopped[k]) / sims
			se := math.Sqrt(max(spent, 1e-4) * (1 - spent) / sims)
			if rate > spent+3*se {
				t.Errorf("%s %v: false alarms by look %d (%d pairs) %v, spent %v (+3 SE %v)", c.name, c.looks, k, n, rate, spent, 3*se)
			}
		}
		t.Logf("%s %v: levels %.4f, false alarms by look %v of %d (alpha %v)", c.name, c.looks, levels, stopped, sims, alpha)
	}
}

// replaySimulation checks simulateSignedRanks's incremental W+ against W+
// recomputed from scratch, replaying the same random stream.
func replaySimulation(t *testing.T, looks []int) {
	t.Helper()
	const sims = 300
	got := simulateSignedRanks(looks, sims, rand.New(rand.NewPCG(43, 44)))
	r := rand.New(rand.NewPCG(43, 44))
	nmax := looks[len(looks)-1]
	order := make([]int, nmax)
	d := make([]float64, nmax)
	for seq := range sims {
		// The same draws as simulateSignedRanks: a random order of
		// the magnitudes 1..nmax, then the signs.
		for i := range order {
			j := r.IntN(i + 1)
			order[i] = order[j]
			order[j] = i + 1
		}
		var signs uint64
		for i, a := range order {
			if i%64 == 0 {
				signs = r.Uint64()
			}
			d[i] = float64(a)
			if signs&1 == 0 {
				d[i] = -d[i]
			}
			signs >>= 1
		}
		for k, n := range looks {
			_, twoW := signedRanks(d[:n])
			w := twoW / 2
			if want := min(w, n*(n+1)/2-w); int(got[seq*len(looks)+k]) != want {
				t.Fatalf("looks %v, sequence %d, %d pairs: simulated min(W+, W-) %d, recomputed %d", looks, seq, n, got[seq*len(looks)+k], want)
			}
		}
	}
}

// A run that ends at fewer pairs than it planned (blocks lost, its time
// budget spent) keeps every look but the last as planned, and its last
// look spends the alpha left: at least as lenient as the planned design's
// level at that look, and the false alarms over the whole run, by
// simulation with data that never differ, stay within alpha.
func TestFinalLevels(t *testing.T) {
	const alpha = 0.05
	if got, want := FinalLevels([]int{6, 7, 8}, 8, alpha, SpendOBF), SequentialLevels([]int{6, 7, 8}, alpha, SpendOBF); !slices.Equal(got, want) {
		t.Errorf("ending as planned: %v, want SequentialLevels' %v", got, want)
	}
	if FinalLevels(nil, 8, alpha, SpendOBF) != nil || FinalLevels([]int{7, 6}, 8, alpha, SpendOBF) != nil {
		t.Error("bad looks give levels")
	}
	r := rand.New(rand.NewPCG(51, 52))
	for _, c := range []struct {
		name    string
		planned int
		looks   []int
		spend   func(t, alpha float64) float64
	}{
		{"OBF", 13, []int{6, 7}, SpendOBF},
		{"OBF", 13, []int{6, 7, 8, 9, 10}, SpendOBF},
		{"Pocock", 13, []int{6, 7, 8, 9}, SpendPocock},
		{"OBF, one look", 13, []int{6}, SpendOBF},
	} {
		var full []int
		for n := c.looks[0]; n <= c.planned; n++ {
			full = append(full, n)
		}
		planned := SequentialLevels(full, alpha, c.spend)
		got := FinalLevels(c.looks, c.planned, alpha, c.spend)
		last := len(c.looks) - 1
		for k := range last {
			if got[k] != planned[k] {
				t.Errorf("%s %v of %d: look %d's level %v, the planned design's %v", c.name, c.looks, c.planned, c.looks[k], got[k], planned[k])
			}
		}
		if got[last] < planned[last] || got[last] > math.Nextafter(alpha, 1) {
			t.Errorf("%s %v of %d: last level %v, planned %v: want between it and alpha", c.name, c.looks, c.planned, got[last], planned[last])
		}
		const sims = 10000
		stopped := 0
		d := make([]float64, c.looks[last])
		for range sims {
			for i := range d {
				d[i] = r.NormFloat64() * 0.05
			}
			for k, n := range c.looks {
				if SignedRank(d[:n]) < got[k] {
					stopped++
					break
				}
			}
		}
		rate := float64(stopped) / sims
		if se := math.Sqrt(alpha * (1 - alpha) / sims); rate > alpha+3*se {
			t.Errorf("%s %v of %d: false alarms %v over the run, above alpha %v (+3 SE %v)", c.name, c.looks, c.planned, rate, alpha, 3*se)
		}
		t.Logf("%s %v of %d: levels %.4f (planned %.4f), false alarms %v", c.name, c.looks, c.planned, got, planned[:len(c.looks)], rate)
	}
}

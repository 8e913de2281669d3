package stats

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
)

// SpendOBF is the O'Brien-Fleming-type alpha-spending function of Lan and
// DeMets: the part of alpha a group-sequential test may have spent by the
// information fraction t (pairs so far over the most pairs),
// 2 - 2*Phi(z_{1-alpha/2}/sqrt(t)). It spends almost nothing early (at
// alpha 0.05: 0.00009 at t = 0.25, 0.0056 at 0.5) and keeps nearly all of
// alpha for the last look, so a sequential run costs little power against
// one fixed-size test, but stops early only on a large change. It is 0
// for t <= 0 and alpha for t >= 1.
func SpendOBF(t, alpha float64) float64 {
	switch {
	case t <= 0:
		return 0
	case t >= 1:
		return alpha
	}
	z := stdNormalInvCDF(1 - alpha/2)
	return math.Erfc(z / math.Sqrt(t) / math.Sqrt2) // 2*(1-Phi(z/sqrt(t)))
}

// SpendPocock is the Pocock-type alpha-spending function of Lan and
// DeMets, alpha*ln(1+(e-1)*t): nearly even spending over the looks, so an
// early stop on a moderate change is likelier than with SpendOBF, at the
// price of a stricter last look and less power if the run goes the whole
// way. It is 0 for t <= 0 and alpha for t >= 1.
func SpendPocock(t, alpha float64) float64 {
	switch {
	case t <= 0:
		return 0
	case t >= 1:
		return alpha
	}
	return alpha * math.Log1p((math.E-1)*t)
}

// Monte Carlo size and seed of SequentialLevels. With 100,000 sequences
// the cumulative false-alarm fraction the levels are fitted to is within
// about 0.0007 (one standard error at 0.05) of the probability it
// estimates.
const (
	seqSims            = 100000
	seqSeed1, seqSeed2 = 20240917, 0x5e9
	seqCacheMax        = 64
)

// seqCache holds the levels by looks and spent alphas, and the last
// simulation by its looks (the same looks planned at another alpha or
// with another spending function reuse it).
var seqCache = struct {
	sync.Mutex
	levels   map[string][]float64
	simLooks string
	sim      []int32
}{levels: map[string][]float64{}}

// SequentialLevels returns the nominal level of each look of a
// group-sequential paired comparison: at look k, after looks[k] pairs,
// the run stops and calls a change when SignedRank of those pairs' log
// ratios is below levels[k] (strictly, like p < alpha). looks are the
// increasing numbers of pairs at which the test is made, the last being
// the most the run will take. The levels keep the probability of a false
// alarm (a stop when head and base do not differ) by look k at most
// spend(looks[k]/looks[last], alpha), so at most alpha over the whole
// run, where testing every look at alpha would raise it well above.
//
// Under the null hypothesis, with continuous differences (no zeros, no
// ties), the signs of the differences are fair independent coins and the
// ranks of their magnitudes are a uniformly random order, whatever the
// distribution of the differences: so the joint law of the successive
// signed-rank statistics is known, and at each look the p-value is a
// function of W+ alone. That joint law has no closed form; it is
// estimated by a fixed-seed Monte Carlo of 100,000 sequences of
// looks[last] random signs and magnitude orders (the same law as
// standard normal data, faster to draw), W+ being updated as each pair
// joins, so the result is deterministic. Look by look, the level is the
// largest that keeps the fraction of sequences stopped so far (given the
// earlier looks' levels) within the spent alpha, and whose own p-value is
// within it too (P(p <= p_k) alone is p_k exactly; for the first look
// that can stop this is the whole rule, with no Monte Carlo error). The
// rejection region is then p <= p_k for an attainable no-ties p-value
// p_k, and levels[k] is the next float64 above p_k, so that SignedRank's
// p < levels[k] exactly when p <= p_k. A look whose smallest attainable
// p, MinSignedRankP(looks[k]), exceeds its spent alpha cannot stop and
// gets level 0 (at alpha 0.05 with SpendOBF and 20 pairs at most: every
// look before 10 pairs). The Monte Carlo error on a later look's
// cumulative false-alarm rate is about 0.0007 (one standard error at
// 0.05). With ties or zeros in real data (a figure repeated exactly) each
// look's p is still exact given the ties, so no single look's false-alarm
// rate exceeds its level, but the joint rate is only approximately the
// planned one.
//
// spend is an alpha-spending function such as SpendOBF or SpendPocock:
// non-decreasing in t, 0 at 0 and alpha at 1; its values are clamped to
// [0, alpha] and a NaN counts as 0. The result is nil when looks is empty,
// not strictly increasing or starts below 1, alpha is not strictly
// between 0 and 1, or spend is nil. Results are cached by looks and the
// spent alphas (what they depend on, whatever the function), and the last
// simulation by its looks. It takes about 0.03 s for up to 20 pairs (the
// time grows as the number of pairs times its logarithm, the memory as
// 0.4 MB per look). looks is not modified.
func SequentialLevels(looks []int, alpha float64, spend func(t, alpha float64) float64) []float64 {
	if len(looks) == 0 || spend == nil || !validLevel(alpha) || looks[0] < 1 {
		return nil
	}
	for k := 1; k < len(looks); k++ {
		if looks[k] <= looks[k-1] {
			return nil
		}
	}
	nmax := looks[len(looks)-1]
	spent := make([]float64, len(looks))
	for k, n := range looks {
		spent[k] = spendAt(spend, float64(n)/float64(nmax), alpha)
	}
	return levelsSpent(looks, spent)
}

// spendAt is spend(t, alpha) clamped to [0, alpha], a NaN as 0.
func spendAt(spend func(t, alpha float64) float64, t, alpha float64) float64 {
	s := spend(t, alpha)
	if !(s > 0) {
		s = 0
	}
	return min(s, alpha)
}

// FinalLevels are SequentialLevels for a run that planned planned pairs
// at most but ends at looks' last, fewer: every look but the last keeps
// the level it had in the planned design (spend(look/planned)), and the
// last spends what alpha is left (Lan-DeMets: the final analysis spends
// the rest). A run that ends short because blocks were lost or its time
// budget ran out, not because of what its tests said, thus keeps alpha
// over the whole run without holding its last look to an interim look's
// stricter level. With planned at or below the last look it is
// SequentialLevels. Nil on the inputs SequentialLevels refuses.
func FinalLevels(looks []int, planned int, alpha float64, spend func(t, alpha float64) float64) []float64 {
	if len(looks) == 0 || spend == nil || !validLevel(alpha) || looks[0] < 1 {
		return nil
	}
	last := looks[len(looks)-1]
	if planned <= last {
		return SequentialLevels(looks, alpha, spend)
	}
	for k := 1; k < len(looks); k++ {
		if looks[k] <= looks[k-1] {
			return nil
		}
	}
	spent := make([]float64, len(looks))
	for k, n := range looks {
		spent[k] = spendAt(spend, float64(n)/float64(planned), alpha)
	}
	spent[len(looks)-1] = alpha
	return levelsSpent(looks, spent)
}

// levelsSpent are the looks' levels given the alpha spent by each (non-
// decreasing, at most alpha): SequentialLevels' computation.
func levelsSpent(looks []int, spent []float64) []float64 {
	// The levels depend on nothing else, so this key is exact whatever
	// spend is (two closures sharing code can spend differently).
	key := fmt.Sprint(looks, spent)
	seqCache.Lock()
	cached, ok := seqCache.levels[key]
	seqCache.Unlock()
	if ok {
		return append([]float64(nil), cached...)
	}

	L := len(looks)
	simKey := fmt.Sprint(looks)
	seqCache.Lock()
	ms := seqCache.sim
	if seqCache.simLooks != simKey {
		ms = nil
	}
	seqCache.Unlock()
	if ms == nil {
		ms = simulateSignedRanks(looks, seqSims, rand.New(rand.NewPCG(seqSeed1, seqSeed2)))
	}
	alive := make([]bool, seqSims)
	for i := range alive {
		alive[i] = true
	}
	stopped, canStop := 0, false
	levels := make([]float64, L)
	for k, n := range looks {
		ps := noTiePValues(n)
		hist := make([]int, len(ps))
		for i, a := range alive {
			if a {
				hist[ms[i*L+k]]++
			}
		}
		// The largest j whose region {m <= j} (p <= ps[j]; ps rises
		// with m) keeps both bounds. Until some look can stop, the
		// chance of a first stop here is exactly ps[j], and only that
		// bound applies: no Monte Carlo error.
		budget := spent[k] * seqSims
		if !canStop {
			budget = math.Inf(1)
		}
		j, cum := -1, stopped
		for m, p := range ps {
			cum += hist[m]
			if p > spent[k] || float64(cum) > budget {
				break
			}
			j = m
		}
		if j < 0 {
			continue // level 0: this look cannot stop
		}
		levels[k], canStop = math.Nextafter(ps[j], 2), true
		for i, a := range alive {
			if a && int(ms[i*L+k]) <= j {
				alive[i] = false
				stopped++
			}
		}
	}

	seqCache.Lock()
	if len(seqCache.levels) >= seqCacheMax {
		clear(seqCache.levels)
	}
	seqCache.levels[key] = levels
	seqCache.simLooks, seqCache.sim = simKey, ms // read only from here on
	seqCache.Unlock()
	return append([]float64(nil), levels...)
}

// noTiePValues is SignedRank's p-value for n non-zero differences without
// ties at W+ = m, for m = 0..floor(n(n+1)/4) (by symmetry W+ = n(n+1)/2 -
// m has the same), computed by the same formulas as SignedRank so that the
// values are equal bit for bit. It rises with m.
func noTiePValues(n int) []float64 {
	total := n * (n + 1) / 2
	ps := make([]float64, total/2+1)
	if n <= signedRankExactLimit {
		counts := noTieCounts(n)
		lower, all := 0.0, math.Ldexp(1, n)
		for m := range ps {
			lower += counts[m]
			// P(W+ >= m) counts all but W+ < m.
			ps[m] = exactSignedRankP(lower, all-lower+counts[m], n)
		}
		return ps
	}
	sumSq := 0.0
	for i := 1; i <= n; i++ {
		sumSq += float64(2*i) * float64(2*i)
	}
	for m := range ps {
		ps[m] = normalSignedRankP(2*m, 2*total, sumSq/4)
	}
	return ps
}

// simulateSignedRanks draws sims sequences of looks[last] null paired
// differences, as independent fair signs and a uniformly random order of
// magnitudes, and returns for sequence i and look k, at [i*len(looks)+k],
// min(W+, n(n+1)/2 - W+) of its first n = looks[k] differences. W+ is
// kept up to date as each difference joins: it enters with rank 1 + the
// number of smaller magnitudes so far, and every earlier positive one of
// larger magnitude moves up a rank; a bit set (up to 64 pairs) or Fenwick
// trees over the magnitude order count both.
func simulateSignedRanks(looks []int, sims int, r *rand.Rand) []int32 {
	L, nmax := len(looks), looks[len(looks)-1]
	out := make([]int32, sims*L)
	order := make([]int, nmax)
	// Up to 64 pairs the magnitudes so far fit in a bit set, and counting
	// is a popcount; beyond, Fenwick trees count in log time.
	small := nmax <= 64
	all, pos := make(fenwick, nmax+1), make(fenwick, nmax+1)
	for seq := range sims {
		for i := range order {
			j := r.IntN(i + 1) // Fisher-Yates, inside out
			order[i] = order[j]
			order[j] = i + 1
		}
		clear(all)
		clear(pos)
		var signs, allBits, posBits uint64 // bit a-1: magnitude a so far
		w, look, posSoFar := 0, 0, 0
		for i, a := range order {
			if i%64 == 0 {
				signs = r.Uint64()
			}
			if small {
				w += bits.OnesCount64(posBits >> a) // earlier positives above a
				s := signs & 1
				w += int(s) * (bits.OnesCount64(allBits&(1<<(a-1)-1)) + 1)
				posBits |= s << (a - 1)
				allBits |= 1 << (a - 1)
			} else {
				w += posSoFar - pos.prefix(a)
				if signs&1 != 0 {
					w += all.prefix(a) + 1
					pos.add(a)
					posSoFar++
				}
				all.add(a)
			}
			signs >>= 1
			if i+1 == looks[look] {
				n := i + 1
				out[seq*L+look] = int32(min(w, n*(n+1)/2-w))
				look++
			}
		}
	}
	return out
}

// fenwick is a Fenwick (binary indexed) tree of counts over 1..len-1.
type fenwick []int32

// prefix is the count at 1..i.
func (f fenwick) prefix(i int) int {
	s := 0
	for ; i > 0; i -= i & -i {
		s += int(f[i])
	}
	return s
}

// add counts one more at i.
func (f fenwick) add(i int) {
	for ; i < len(f); i += i & -i {
		f[i]++
	}
}

package nodegen

// The pair rule of the agreement between the two generators
// (TestAgreement, agree_test.go, in the end-to-end lane): a function of
// the pairs' throughputs, tested here on made-up ones.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// crossTolerance bounds how far the Node client may beat `ceiling
// load` (issue 32): node/ceiling above 1.10 means our client costs
// the server more than a Node client does, so our headline would
// understate the server. The bound was 30% while node/ceiling read
// 1.15-1.22 (30 Nov - 2 Dec 2026) and hid that bias. The other side
// is reported, not failed: node/ceiling below 1 is the server paying
// more for Node's eager reads than for our batched pattern, which
// docs/efficiency.md measures and claims (our default is the cheapest
// realistic pattern for the server); its size follows the host. On 6
// Dec 2026, measured at once on this VM, it moved between 0.87 and
// 0.98 from one minute to the next, with nothing else on the CPUs, so
// a lower bound of 0.90 failed one run in six on the host alone.
const crossTolerance = 0.10

// generator is one of the two generators and the I/O pattern it reports.
type generator struct {
	name    string
	argv    []string
	pattern string // generator.io_pattern
}

// agreement is one attempt, or the pool of several: each generator's
// repeats, pair by pair.
type agreement struct {
	gens     []generator
	tput     [][]float64 // per generator, its repeats' msg/s (index: the pair)
	perCPU   []float64   // per generator, messages per server CPU-second (mean over the attempts)
	attempts int         // attempts pooled (1 for one attempt)
	noisy    string      // why this attempt cannot tell; "" when it can
	// foreign is the window in which other work took the most of the
	// two CPUs.
	foreign foreignShare
}

// foreignShare is the other work on the two CPUs over one window: its
// share of their time, and the processes that took the most.
type foreignShare struct {
	share float64
	who   string
}

func (f foreignShare) String() string {
	if f.who == "" {
		return "none measured"
	}
	return f.who
}

// with is the pool a plus attempt b: every pair of both.
func (a agreement) with(b agreement) agreement {
	p := agreement{gens: a.gens, tput: make([][]float64, len(a.tput)), perCPU: make([]float64, len(a.perCPU)), attempts: a.attempts + b.attempts}
	for g := range a.tput {
		p.tput[g] = append(slices.Clone(a.tput[g]), b.tput[g]...)
		p.perCPU[g] = (a.perCPU[g]*float64(a.attempts) + b.perCPU[g]*float64(b.attempts)) / float64(p.attempts)
	}
	return p
}

// ratios is each pair's node/ceiling, sorted.
func (a agreement) ratios() []float64 {
	r := make([]float64, len(a.tput[0]))
	for i := range r {
		r[i] = a.tput[1][i] / a.tput[0][i]
	}
	slices.Sort(r)
	return r
}

// median is the middle pair's node/ceiling (the mean of the two middle
// ones for an even count).
func (a agreement) median() float64 {
	r := a.ratios()
	n := len(r)
	if n%2 == 1 {
		return r[n/2]
	}
	return (r[n/2-1] + r[n/2]) / 2
}

// verdict is 1 when Node does not beat `ceiling load` beyond the bound
// (the median pair's node/ceiling at most 1+crossTolerance), -1 when it
// does (the median and at least three quarters of the pairs above it: 3
// of 4, 6 of 8), 0 when the pairs cannot tell.
func (a agreement) verdict() int {
	if a.median() <= 1+crossTolerance {
		return 1
	}
	beyond := 0
	for _, r := range a.ratios() {
		if r > 1+crossTolerance {
			beyond++
		}
	}
	if n := len(a.tput[0]); 4*beyond >= 3*n {
		return -1
	}
	return 0
}

func (a agreement) ratioList() string {
	var s []string
	for _, r := range a.ratios() {
		s = append(s, fmt.Sprintf("%.3f", r))
	}
	return strings.Join(s, ", ")
}

// The pair rule: agree, disagree, or cannot tell.
func TestAgreementVerdict(t *testing.T) {
	pairs := func(ratios ...float64) agreement {
		a := agreement{tput: make([][]float64, 2)}
		for _, r := range ratios {
			a.tput[0] = append(a.tput[0], 1000)
			a.tput[1] = append(a.tput[1], 1000*r)
		}
		return a
	}
	for _, tc := range []struct {
		ratios []float64
		want   int
	}{
		{[]float64{0.95, 0.97, 1.02, 0.99}, 1},
		{[]float64{0.70, 1.30, 0.96, 1.04}, 1},  // noisy pairs, but the median agrees
		{[]float64{1.21, 1.18, 1.25, 1.22}, -1}, // the old gap: every pair beyond
		{[]float64{1.21, 1.02, 1.25, 1.22}, -1}, // all but one beyond
		{[]float64{0.80, 0.85, 0.70, 1.30}, 1},  // median 0.825: Node below ours is reported, not failed
		{[]float64{0.80, 0.82, 0.87, 0.87}, 1},  // 6 Dec 2026: every pair below 0.90
		{[]float64{1.15, 1.12, 0.95, 1.02}, 1},  // median 1.07
		{[]float64{1.25, 1.30, 0.95, 1.02}, 0},  // median 1.135, only two beyond: cannot tell
		// Two attempts pooled: 5 December's drift (the first beyond,
		// the second within) agrees; the old gap twice disagrees.
		{[]float64{0.941, 1.181, 1.271, 1.291, 0.916, 0.942, 0.943, 1.381}, 1},
		{[]float64{1.21, 1.18, 1.25, 1.22, 1.02, 1.19, 1.24, 1.16}, -1},
		{[]float64{1.21, 1.02, 1.25, 1.22, 1.02, 1.04, 1.24, 1.16}, 0}, // median 1.185, five of eight beyond
	} {
		a := pairs(tc.ratios...)
		if got := a.verdict(); got != tc.want {
			t.Errorf("pairs %v (median %.3f): verdict %d, want %d", tc.ratios, a.median(), got, tc.want)
		}
	}
}

package main

import (
	"slices"

	"github.com/ceiling-bench/ceiling/publish"
)

// simResult is every rule's tally for every recording and scenario, and
// what the detector's least change was on each recording.
type simResult struct {
	tally [][][]tally // [recording][scenario][rule]
	// minChange is, per recording, the median over its histories of the
	// least change publish.Changes asked for (the median floor, %).
	minChange []float64
}

// simulate scores every rule on o.seeds histories per recording and
// scenario. Seed s gives the same noise and the same change position to
// every scenario of a recording, so the scenarios differ only in what
// was planted.
func simulate(recs []recording, o options) *simResult {
	sim := &simResult{}
	for _, rec := range recs {
		byScenario := make([][]tally, len(scenarios))
		var mins []float64
		for si, sc := range scenarios {
			byScenario[si] = make([]tally, len(rules))
			for seed := range o.seeds {
				h, truth := history(rec, sc, seed, o)
				if si == 0 {
					mins = append(mins, publish.MinChangePct(h))
				}
				for ri, r := range rules {
					byScenario[si][ri].add(judge(r.detect(h), truth))
				}
			}
		}
		sim.tally = append(sim.tally, byScenario)
		sim.minChange = append(sim.minChange, median(mins))
	}
	return sim
}

// median of xs (0 when empty).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	return (s[(n-1)/2] + s[n/2]) / 2
}

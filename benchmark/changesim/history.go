package main

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

// Shape of every history: the 60 entries, a change planted at
// an entry drawn uniformly from [firstAt, lastAt], so that at least 10
// entries lie on each side of it (more than the detector's 3 a side, so
// that a miss is the rule's, not the history's length).
const (
	entries = 60
	firstAt = 10
	lastAt  = 50
)

// scenario is a planted change of the level: from entry `at` on, over
// ramp entries, the level moves by change (a fraction) in equal parts,
// and stays there. ramp 1 is a step; change 0 is A/A (nothing planted).
type scenario struct {
	name   string
	change float64
	ramp   int
}

// scenarios are the issue's: A/A, steps of −3, −5, −10 and −20%, a slope
// of −2% per entry over 5 entries, and a +10% step (an improvement is a
// change too).
var scenarios = []scenario{
	{"A/A", 0, 1},
	{"step −3%", -0.03, 1},
	{"step −5%", -0.05, 1},
	{"step −10%", -0.10, 1},
	{"step −20%", -0.20, 1},
	{"slope −2%/entry × 5", -0.10, 5},
	{"step +10%", +0.10, 1},
}

// level is the factor the scenario applies at entry i when planted at at.
func (s scenario) level(i, at int) float64 {
	switch {
	case s.change == 0 || i < at:
		return 1
	case i >= at+s.ramp:
		return 1 + s.change
	}
	return 1 + s.change*float64(i-at+1)/float64(s.ramp)
}

// span is the true change of a history: the entries whose level moved,
// first to last; ok false on A/A.
type span struct {
	first, last int
	ok          bool
}

// entry is one synthetic published run before any change is planted:
// its headline and its A-A noise floor (%).
type entry struct {
	headline, floorPct float64
}

// baseEntries are a history's entries before any change: each headline is
// the -stat of -k runs drawn with replacement from rec's runs, and each
// floor the A-A floor (-floor). They depend only on rec and seed, not on
// the scenario, so every scenario plants its change into the same noise.
func baseEntries(rec recording, seed int, o options) []entry {
	r := rand.New(rand.NewPCG(uint64(seed), stream(rec.name)))
	out := make([]entry, entries)
	draws := make([]float64, o.k)
	for i := range out {
		for j := range draws {
			draws[j] = rec.runs[r.IntN(len(rec.runs))]
		}
		h := aggregate(draws, o.stat)
		repeat := rec.runs[r.IntN(len(rec.runs))] // drawn in either mode, so the headlines do not depend on -floor
		floor := rec.spreadPct
		if o.floor == floorAA {
			floor = *result.NoiseFloorPct(h, repeat) // both positive: loadRecording keeps no other run
		}
		out[i] = entry{headline: h, floorPct: floor}
	}
	return out
}

// changeAt is where seed's change is planted in rec's histories: the same
// entry for every scenario, from a generator of its own.
func changeAt(rec recording, seed int) int {
	r := rand.New(rand.NewPCG(uint64(seed), stream(rec.name)^0x9e3779b97f4a7c15))
	return firstAt + r.IntN(lastAt-firstAt+1)
}

// stream names a recording's random stream by its file name, so a
// recording's histories do not depend on the other files given.
func stream(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// aggregate is a headline made of draws: max, as result.Result.Summarize
// takes the highest clean point of the headline batch; or mean.
func aggregate(draws []float64, stat string) float64 {
	if stat == statMax {
		return slices.Max(draws)
	}
	s := 0.0
	for _, x := range draws {
		s += x
	}
	return s / float64(len(draws))
}

// history is the published history seed gives for rec under sc: one
// series in one regime, oldest first, the change planted on the
// headlines (a floor is a ratio: a change of level leaves it alone).
func history(rec recording, sc scenario, seed int, o options) ([]publish.HistoryEntry, span) {
	at := changeAt(rec, seed)
	base := baseEntries(rec, seed, o)
	h := make([]publish.HistoryEntry, len(base))
	for i, e := range base {
		floor := e.floorPct
		h[i] = publish.HistoryEntry{
			GitRef:         fmt.Sprintf("entry-%02d", i),
			Generator:      "changesim",
			Regime:         rec.regime,
			Batch:          rec.batch,
			Connections:    rec.conns,
			ThroughputPerS: e.headline * sc.level(i, at),
			NoiseFloorPct:  &floor,
		}
	}
	if sc.change == 0 {
		return h, span{}
	}
	return h, span{first: at, last: at + sc.ramp - 1, ok: true}
}

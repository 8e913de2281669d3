package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/schedule"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/publish/schema"
	"github.com/ceiling-bench/ceiling/result"
)

// curve is a deterministic server for the search tests: what a point at
// (batch, connections) measures. A scripted PointRunner that answers from
// a function, so ladder and search can be run against the same server.
type curve struct {
	thr      func(c int) float64 // throughput at c connections
	p99      func(c int) float64 // ns; nil: 1 ms
	errorsAt int                 // from this many connections on, the point has errors (0: never)
	failOnce map[int]bool        // these connection counts fail (no measurement) the first time asked
	capAt    int                 // from here on the generator is at its cores: a lower bound (0: never)
	asked    []PointSpec
}

func (cv *curve) RunPoint(_ context.Context, spec PointSpec) verdict.Outcome {
	cv.asked = append(cv.asked, spec)
	c := spec.Key.Connections
	if cv.failOnce[c] {
		delete(cv.failOnce, c)
		return verdict.Outcome{FailReason: "server exited during the point", LogTail: "boom"}
	}
	s := load.Summary{Mode: "closed", ThroughputPerS: cv.thr(c), MeasuredNs: 1e9,
		ConnectionsRequested: c, ConnectionsOpen: c}
	s.Latency.P99 = 1e6
	if cv.p99 != nil {
		s.Latency.P99 = int64(cv.p99(c))
	}
	if cv.errorsAt > 0 && c >= cv.errorsAt {
		s.Errors = int64(c - cv.errorsAt + 1)
	}
	srv := result.CPUStats{Samples: 4, MeanCores: 0.95, PinnedCores: 1, FractionMean: 0.95}
	gen := result.CPUStats{Samples: 4, MeanCores: 0.5, PinnedCores: 1, FractionMean: 0.5}
	if cv.capAt > 0 && c >= cv.capAt {
		srv.MeanCores, srv.FractionMean = 0.7, 0.7
		gen.MeanCores, gen.FractionMean = 0.97, 0.97
	}
	return verdict.Outcome{Load: &load.Result{Summary: s}, ServerCPU: srv, GeneratorCPU: gen}
}

// geomLadder is n+1 rungs from lo to hi, equally spaced in log space (a
// ratio of (hi/lo)^(1/n) between rungs).
func geomLadder(lo, hi, n int) knob.Ladder {
	var l knob.Ladder
	for i := 0; i <= n; i++ {
		c := int(math.Round(float64(lo) * math.Pow(float64(hi)/float64(lo), float64(i)/float64(n))))
		if len(l) == 0 || c > l.Top() {
			l = append(l, c)
		}
	}
	return l
}

// The realistic ladders: one that resolves a ceiling to about ±5% on its
// own (rungs 9% apart, 2^(1/8), over six octaves: the search's reference),
// and a coarser one (2^(1/4), 19% apart) between which the search may
// land above the ladder, never more than 5% below it.
var (
	fineLadder   = geomLadder(16, 1024, 48) // 49 rungs
	coarseLadder = geomLadder(16, 1024, 24) // 25 rungs
)

func searchOpts(t *testing.T, search string, batches knob.Ladder, lad knob.Ladder, objective string) *Plan {
	t.Helper()
	o := knob.DefaultOptions(false)
	o.BatchLadder, o.ConnsLadders = batches, knob.ConnsLadders{}
	for _, b := range batches {
		o.ConnsLadders[b] = lad
	}
	o.HeadlineBatch = batches[0]
	o.Search, o.Objective = search, objective
	p, err := ResolveKnobs(o, pinning.CPUSet{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sweepPoints runs a whole sweep against cv and returns its result and
// the number of sweep points it measured (the A-A repeat excluded).
func sweepPoints(t *testing.T, o *Plan, cv *curve) (*result.Result, int) {
	t.Helper()
	r := &result.Result{}
	if err := Sweep(context.Background(), o, cv, r, &bytes.Buffer{}, verdict.DefaultThresholds, newFakeClock(0)); err != nil && !strings.Contains(err.Error(), "no clean point") {
		t.Fatal(err)
	}
	n := 0
	for _, p := range r.Curve {
		if p.Role == result.RoleSweep {
			n++
		}
	}
	return r, n
}

// The goal of SEARCH=bisect: each batch's ceiling within ±5% of the fixed
// ladder's, in at most a third of its points, with the same rules —
// curves that plateau, peak and fall, stop meeting an objective, fail a
// point mid-search, error under overload, or leave the generator capped.
func TestBisectFindsTheLaddersCeilingInAThirdOfThePoints(t *testing.T) {
	const ms = 1e6
	fresh := func(cv curve) func() *curve {
		return func() *curve {
			c := cv
			c.failOnce = map[int]bool{}
			for k, v := range cv.failOnce {
				c.failOnce[k] = v
			}
			return &c
		}
	}
	// A plateau with a deterministic ±2% ripple (the noise of a real run).
	ripple := func(c int) float64 { return 1 + 0.02*math.Sin(float64(c)) }
	cases := []struct {
		name      string
		cv        func() *curve
		objective string
		lowerBnd  bool
	}{
		{name: "plateau", cv: fresh(curve{thr: func(c int) float64 { return math.Min(1000*float64(c), 100e3) * ripple(c) }})},
		{name: "saturating slowly", cv: fresh(curve{thr: func(c int) float64 { return 100e3 * float64(c) / (float64(c) + 40) }})},
		{name: "peak then fall", cv: fresh(curve{thr: func(c int) float64 {
			x := float64(c) / 150
			return 150e3 * x * math.Exp(1-x)
		}})},
		{name: "sharp peak then fall", cv: fresh(curve{thr: func(c int) float64 {
			if c <= 150 {
				return 1000 * float64(c)
			}
			return 150e3 * math.Pow(150/float64(c), 2)
		}})},
		{name: "objective bound", objective: "latency_ns.p99 <= 5ms", cv: fresh(curve{
			thr: func(c int) float64 { return 300 * float64(c) },
			p99: func(c int) float64 { return ms * (1 + math.Pow(float64(c)/300, 4)) }, // 5 ms at 424
		})},
		{name: "failed point mid-search", cv: fresh(curve{
			thr:      func(c int) float64 { return math.Min(1000*float64(c), 100e3) },
			failOnce: map[int]bool{64: true, 256: true},
		})},
		{name: "failed point while bisecting", cv: fresh(curve{
			thr: func(c int) float64 {
				if c <= 150 {
					return 1000 * float64(c)
				}
				return 150e3 * math.Pow(150/float64(c), 2)
			},
			failOnce: map[int]bool{181: true},
		})},
		{name: "errors under overload", cv: fresh(curve{thr: func(c int) float64 { return 300 * float64(c) }, errorsAt: 500})},
		{name: "generator-capped lower bound", lowerBnd: true, cv: fresh(curve{
			thr:   func(c int) float64 { return math.Min(1000*float64(c), 120e3) },
			capAt: 100,
		})},
	}
	for _, tc := range cases {
		for _, lad := range []struct {
			name  string
			l     knob.Ladder
			above bool // the search may land above the ladder (between its rungs)
		}{{"fine", fineLadder, false}, {"coarse", coarseLadder, true}} {
			t.Run(tc.name+"/"+lad.name, func(t *testing.T) {
				rl, nl := sweepPoints(t, searchOpts(t, knob.SearchLadder, knob.Ladder{10}, lad.l, tc.objective), tc.cv())
				rb, nb := sweepPoints(t, searchOpts(t, knob.SearchBisect, knob.Ladder{10}, lad.l, tc.objective), tc.cv())
				cl, cb := rl.Ceilings[0], rb.Ceilings[0]
				if !cl.Found || !cb.Found {
					t.Fatalf("ceilings: ladder %+v, bisect %+v", cl, cb)
				}
				ratio := cb.ThroughputPerS / cl.ThroughputPerS
				t.Logf("ladder %.0f at %d conns in %d points; bisect %.0f at %d conns in %d points (%+.1f%%)",
					cl.ThroughputPerS, cl.Connections, nl, cb.ThroughputPerS, cb.Connections, nb, (ratio-1)*100)
				if ratio < 1-schedule.SearchTolerance || ratio > 1+schedule.SearchTolerance && !lad.above {
					t.Errorf("bisect's ceiling %.0f is %+.1f%% off the ladder's %.0f", cb.ThroughputPerS, (ratio-1)*100, cl.ThroughputPerS)
				}
				if 3*nb > nl {
					t.Errorf("bisect ran %d points, more than a third of the ladder's %d", nb, nl)
				}
				if cb.LowerBound != cl.LowerBound || cb.LowerBound != tc.lowerBnd {
					t.Errorf("lower bound: ladder %v, bisect %v, want %v", cl.LowerBound, cb.LowerBound, tc.lowerBnd)
				}
				checkSearchPath(t, rb)
			})
		}
	}
}

// The search runs at most a third of the ladder's points, unless its
// bracket alone needs more: the default and quick ladders get the bracket
// only.
func TestSearchBudgetIsAThirdOfTheLadder(t *testing.T) {
	for _, tc := range []struct {
		l    knob.Ladder
		want int
	}{
		{fineLadder, 8}, {coarseLadder, 8}, {geomLadder(2, 128, 24), 7}, {knob.DefaultConnsLadder(10), 3}, {knob.QuickConnsLadder(10), 2},
		{knob.Ladder{7}, 1}, {knob.Ladder{1, 1000}, 6}, // the bracket alone: 1 4 16 64 256 1000
	} {
		if got := schedule.SearchBudget(tc.l); got != tc.want {
			t.Errorf("SearchBudget(%v) = %d, want %d", tc.l, got, tc.want)
		}
	}
	cv := &curve{thr: func(c int) float64 {
		x := float64(c) / 150
		return 150e3 * x * math.Exp(1-x)
	}}
	_, n := sweepPoints(t, searchOpts(t, knob.SearchBisect, knob.Ladder{10}, knob.DefaultConnsLadder(10), ""), cv)
	if n > 3 {
		t.Errorf("bisect ran %d points on the 5-rung default ladder", n)
	}
}

// checkSearchPath: every sweep point of a bisect result carries its place
// on the search path, Config.Order is what ran, and no point was run
// twice within one search.
func checkSearchPath(t *testing.T, r *result.Result) {
	t.Helper()
	if r.Config.Search != knob.SearchBisect {
		t.Errorf("config.search %q", r.Config.Search)
	}
	var ran []result.PointKey
	step := map[result.PointKey]int{} // batch, rep -> last step
	for _, p := range r.Curve {
		if p.Role != result.RoleSweep {
			if p.SearchStep != 0 || p.SearchPhase != "" {
				t.Errorf("point %d (%s) has a search step", p.Index, p.Role)
			}
			continue
		}
		k := result.PointKey{Batch: p.Batch, Connections: p.Connections, Rep: p.Rep}
		if slices.Contains(ran, k) {
			t.Errorf("point %d: %+v ran twice", p.Index, k)
		}
		ran = append(ran, k)
		br := result.PointKey{Batch: p.Batch, Rep: p.Rep}
		if p.SearchStep != step[br]+1 || p.SearchReason == "" || (p.SearchPhase != schedule.PhaseBracket && p.SearchPhase != schedule.PhaseBisect) {
			t.Errorf("point %d: step %d (after %d), phase %q, reason %q", p.Index, p.SearchStep, step[br], p.SearchPhase, p.SearchReason)
		}
		step[br] = p.SearchStep
	}
	if !slices.Equal(ran, r.Config.Order) {
		t.Errorf("config.order %v, ran %v", r.Config.Order, ran)
	}
}

// Batches are interleaved as the ladder does (one step of each in turn),
// reps are the outer loop with a search each, the A-A repeat of the
// headline follows, and the notes say how each batch's search ended.
func TestBisectInterleavesBatchesAndReps(t *testing.T) {
	cv := &curve{thr: func(c int) float64 { return math.Min(1000*float64(c), 100e3) }}
	o := searchOpts(t, knob.SearchBisect, knob.Ladder{10, 100}, coarseLadder, "")
	o.Schedule.Reps = 2
	r, _ := sweepPoints(t, o, cv)
	checkSearchPath(t, r)
	var batches []int
	for _, s := range cv.asked[:4] {
		batches = append(batches, s.Key.Batch)
	}
	if !slices.Equal(batches, []int{10, 100, 10, 100}) {
		t.Errorf("first points' batches %v, want them interleaved", batches)
	}
	last := r.Curve[len(r.Curve)-1]
	if last.Role != result.RoleAARepeat || last.Connections != r.Headline.Connections || last.Rep != 2 {
		t.Errorf("last point %+v, want the A-A repeat of the headline (%d connections)", last, r.Headline.Connections)
	}
	reps := map[int]bool{}
	for _, p := range r.Curve {
		if p.Role == result.RoleSweep {
			reps[p.Rep] = true
			if p.Rep == 1 && p.SearchStep == 1 && p.Connections != coarseLadder[0] {
				t.Errorf("rep 1 starts at %d, want its own search from %d", p.Connections, coarseLadder[0])
			}
		}
	}
	if !reps[0] || !reps[1] {
		t.Errorf("reps run: %v", reps)
	}
	var tab strings.Builder
	if err := result.WriteTable(&tab, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tab.String(), "search paths (SEARCH=bisect") || !strings.Contains(tab.String(), "  batch 100 rep 1: 16 > 64 > 256 > ") {
		t.Errorf("table:\n%s", tab.String())
	}
	notes := strings.Join(r.Notes, "\n")
	for _, want := range []string{"SEARCH=bisect: batch 10: ", "SEARCH=bisect: batch 100: ", "rep 1: plateau"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// An interrupted search leaves the points that finished, labelled, and a
// partial result.
func TestBisectInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cv := &curve{thr: func(c int) float64 { return 1000 * float64(c) }}
	run := &cancelAfter{PointRunner: cv, n: 3, cancel: func() { cancel(fmt.Errorf("interrupt")) }}
	r := &result.Result{}
	if err := Sweep(ctx, searchOpts(t, knob.SearchBisect, knob.Ladder{10}, coarseLadder, ""), run, r, &bytes.Buffer{}, verdict.DefaultThresholds, newFakeClock(0)); err != ErrInterrupted {
		t.Fatalf("error %v", err)
	}
	if len(r.Curve) != 3 || !r.Partial || !strings.Contains(r.PartialReason, "interrupted after 3 of at most 9 points") {
		t.Fatalf("curve %d points, partial %v %q", len(r.Curve), r.Partial, r.PartialReason)
	}
	checkSearchPath(t, r)
}

type cancelAfter struct {
	PointRunner
	n      int
	cancel func()
}

func (c *cancelAfter) RunPoint(ctx context.Context, spec PointSpec) verdict.Outcome {
	out := c.PointRunner.RunPoint(ctx, spec)
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return out
}

// SEARCH is a knob like the others: a bad value exits 2 naming it, and a
// two-arm sweep refuses bisect.
func TestSearchKnob(t *testing.T) {
	o := knob.DefaultOptions(false)
	if o.Search != knob.SearchLadder {
		t.Errorf("default search %q", o.Search)
	}
	err := o.ApplyEnv(func(k string) (string, bool) {
		if k == "SEARCH" {
			return "binary", true
		}
		return "", false
	}, nil)
	if err == nil || !strings.Contains(err.Error(), `SEARCH: "binary" is not a search (ladder | bisect)`) {
		t.Errorf("SEARCH=binary: %v", err)
	}
	o = knob.DefaultOptions(false)
	o.Search = "Bisect"
	if _, err := resolveInto(&o, pinning.CPUSet{0, 1}); err == nil || !strings.Contains(err.Error(), "SEARCH (--search): ") {
		t.Errorf("--search Bisect: %v", err)
	}
	o = knob.DefaultOptions(false)
	o.Search, o.BaseTargetFile = knob.SearchBisect, "benchmark/targets/refserver.json"
	if _, err := resolveInto(&o, pinning.CPUSet{0, 1}); err == nil || !strings.Contains(err.Error(), "SEARCH (--search): bisect is not available in a two-arm sweep") {
		t.Errorf("two-arm bisect: %v", err)
	}
}

// The search's fields validate against the published schema.
func TestBisectResultValidates(t *testing.T) {
	cv := &curve{thr: func(c int) float64 { return math.Min(1000*float64(c), 100e3) }}
	r, _ := sweepPoints(t, searchOpts(t, knob.SearchBisect, knob.Ladder{10}, coarseLadder, ""), cv)
	r.SchemaVersion = result.SchemaVersion
	r.Meta.StartedAt, r.Meta.FinishedAt = time.Now(), time.Now()
	r.Meta.Generator, r.Meta.GitRef = "ceiling-load", "0123abc"
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"search_step":1,"search_phase":"bracket"`) || !strings.Contains(string(b), `"search":"bisect"`) {
		t.Fatalf("document lacks the search fields: %s", b)
	}
	s, err := schema.Compile(schema.Sweep)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := schema.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if probs := s.Validate(doc); len(probs) > 0 {
		t.Errorf("schema problems: %v", probs)
	}
	// And a bad phase is caught.
	bad := strings.Replace(string(b), `"search_phase":"bracket"`, `"search_phase":"guess"`, 1)
	doc, _ = schema.Decode([]byte(bad))
	if probs := s.Validate(doc); len(probs) == 0 {
		t.Error("a search_phase outside the enum validated")
	}
}

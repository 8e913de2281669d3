package schedule

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
)

// server is what a point measures, for driving a schedule without a
// runner: the throughput at (batch, connections), failed (0) or lost
// (< 0); good says whether a measured point meets what the search asks.
type server struct {
	thr      func(batch, conns int) float64
	good     func(batch, conns int) bool // nil: every measured point
	headline int                         // the headline batch
	best     result.Headline             // the highest good sweep point of the headline batch so far
}

func (sv *server) measure(p Point) Observed {
	v := sv.thr(p.Key.Batch, p.Key.Connections)
	o := Observed{Point: p, Lost: v < 0, Failed: v == 0}
	if v > 0 {
		o.ThroughputPerS = v
		o.Good = sv.good == nil || sv.good(p.Key.Batch, p.Key.Connections)
		o.Clean = o.Good
		if p.Role == result.RoleSweep && p.Key.Batch == sv.headline && o.Clean && v > sv.best.ThroughputPerS {
			sv.best = result.Headline{Clean: true, Batch: p.Key.Batch, Connections: p.Key.Connections, ThroughputPerS: v}
		}
	}
	o.Headline = sv.best
	if !sv.best.Clean {
		o.Headline = result.Headline{Batch: sv.headline}
	}
	return o
}

// drive asks s for points until it is done, measuring each on sv.
func drive(t *testing.T, s *Sweep, sv *server) []Point {
	t.Helper()
	var got []Point
	var last []Observed
	for {
		p, more := s.Next(last...)
		if !more {
			return got
		}
		if len(got) > 1000 {
			t.Fatal("the schedule does not end")
		}
		got = append(got, p)
		last = []Observed{sv.measure(p)}
	}
}

func key(b, c, rep int) result.PointKey { return result.PointKey{Batch: b, Connections: c, Rep: rep} }

func ladder(l map[int][]int) func(int) []int { return func(b int) []int { return l[b] } }

// The ladder runs every rung in Order whatever it measured — a failed
// rung is a point like the others — then the A-A repeat and the headroom
// probe at the headline's peak (reps REPS and REPS+1), then FAULT's
// point at the rep after those.
func TestSweepLadderThenRepeatProbeAndFault(t *testing.T) {
	sv := &server{headline: 10, thr: func(b, c int) float64 {
		if b == 10 && c == 8 {
			return 0 // failed
		}
		return float64(b * c)
	}}
	s := NewSweep(SweepPlan{Batches: []int{10, 100}, Conns: ladder(map[int][]int{10: {4, 8, 16}, 100: {2}}), Reps: 1,
		HeadlineBatch: 10, Headroom: true, Fault: true})
	got := drive(t, s, sv)
	sweep := func(b, c int) Point { return Point{Role: result.RoleSweep, Key: key(b, c, 0)} }
	want := []Point{
		sweep(10, 4), sweep(100, 2), sweep(10, 8), sweep(10, 16),
		{Role: result.RoleAARepeat, Key: key(10, 16, 1)},
		{Role: result.RoleHeadroom, Key: key(10, 16, 2)},
		{Role: result.RoleResilience, Key: key(10, 16, 3)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s.Notes() != nil {
		t.Errorf("a ladder has no search notes: %q", s.Notes())
	}
}

// Without a clean headline there is nothing to repeat or probe; FAULT's
// point goes to the headline batch's top rung, after its reps there.
func TestSweepNoCleanHeadline(t *testing.T) {
	sv := &server{headline: 10, thr: func(b, c int) float64 { return 0 }}
	s := NewSweep(SweepPlan{Batches: []int{10}, Conns: ladder(map[int][]int{10: {4, 8}}), Reps: 2,
		HeadlineBatch: 10, Headroom: true, Fault: true})
	got := drive(t, s, sv)
	if len(got) != 5 || got[4] != (Point{Role: result.RoleResilience, Key: key(10, 8, 2)}) {
		t.Errorf("points %+v, want the ladder's 4 and a resilience point at 10x8 rep 2", got)
	}
}

func TestResilienceKey(t *testing.T) {
	h := result.Headline{Clean: true, Batch: 10, Connections: 64}
	ran := []result.PointKey{key(10, 64, 0), key(10, 64, 1), key(10, 32, 5), key(100, 64, 7)}
	if k := ResilienceKey(h, 10, []int{16, 64, 256}, ran); k != key(10, 64, 2) {
		t.Errorf("at the headline: %+v", k)
	}
	if k := ResilienceKey(result.Headline{Batch: 10}, 10, []int{16, 256, 64}, ran); k != key(10, 256, 0) {
		t.Errorf("no headline: %+v, want the largest rung", k)
	}
}

// A point lost on the ladder does not end it (the harness stops asking
// when its context ends); one lost in a search ends the search, with no
// end noted for its rep, and the sweep goes on to the repeat.
func TestSweepLostPoint(t *testing.T) {
	lost := &server{headline: 10, thr: func(b, c int) float64 {
		if c == 8 {
			return -1
		}
		return float64(c)
	}}
	got := drive(t, NewSweep(SweepPlan{Batches: []int{10}, Conns: ladder(map[int][]int{10: {4, 8, 16}}), Reps: 1, HeadlineBatch: 10}), lost)
	if len(got) != 4 || got[3].Role != result.RoleAARepeat || got[3].Key != key(10, 16, 1) {
		t.Errorf("ladder: %+v", got)
	}

	lost = &server{headline: 10, thr: func(b, c int) float64 {
		if c == 64 {
			return -1
		}
		return float64(c)
	}}
	s := NewSweep(SweepPlan{Batches: []int{10}, Conns: ladder(map[int][]int{10: geom(16, 1024, 24)}), Reps: 2, HeadlineBatch: 10, Bisect: true})
	got = drive(t, s, lost)
	if len(got) != 3 || got[1].Key.Connections != 64 || got[2] != (Point{Role: result.RoleAARepeat, Key: key(10, 16, 2)}) {
		t.Errorf("search: %+v", got)
	}
	if n := s.Notes(); len(n) != 1 || n[0] != "SEARCH=bisect: batch 10: 1 points between 16 and 1024 connections (its ladder has 25 rungs)" {
		t.Errorf("notes %q", n)
	}
}

// A point that finished as the sweep stopped is observed without asking
// for another: the search's notes count it, and no rep's end is made up.
func TestSweepObserveWithoutNext(t *testing.T) {
	sv := &server{headline: 10, thr: func(b, c int) float64 { return float64(c) }}
	s := NewSweep(SweepPlan{Batches: []int{10}, Conns: ladder(map[int][]int{10: geom(16, 1024, 24)}), Reps: 1, HeadlineBatch: 10, Bisect: true})
	p, _ := s.Next()
	s.Observe(sv.measure(p))
	if n := s.Notes(); len(n) != 1 || !strings.HasPrefix(n[0], "SEARCH=bisect: batch 10: 1 points ") || strings.Contains(n[0], "rungs):") {
		t.Errorf("notes %q", n)
	}
}

// geom is n+1 rungs from lo to hi, equally spaced in log space.
func geom(lo, hi, n int) []int {
	var l []int
	for i := 0; i <= n; i++ {
		c := int(math.Round(float64(lo) * math.Pow(float64(hi)/float64(lo), float64(i)/float64(n))))
		if len(l) == 0 || c > top(l) {
			l = append(l, c)
		}
	}
	return l
}

// sweepPath is the search's points of one batch and rep, as
// "conns(phase)".
func sweepPath(ps []Point, batch, rep int) string {
	var s []string
	for _, p := range ps {
		if p.Role == result.RoleSweep && p.Key.Batch == batch && p.Key.Rep == rep {
			s = append(s, fmt.Sprintf("%d(%s)", p.Key.Connections, p.Phase[:2]))
		}
	}
	return strings.Join(s, " ")
}

// SEARCH=bisect, table by table: where each search goes and how it ends.
func TestSweepBisect(t *testing.T) {
	peak := func(b, c int) float64 {
		x := float64(c) / 150
		return 150e3 * x * math.Exp(1-x)
	}
	sharp := func(b, c int) float64 {
		if c <= 150 {
			return 1000 * float64(c)
		}
		return 150e3 * math.Pow(150/float64(c), 2)
	}
	for _, tc := range []struct {
		name      string
		sv        server
		l         []int
		objective bool
		path, end string
	}{
		{name: "peak", sv: server{thr: peak}, l: geom(16, 1024, 48),
			path: "16(br) 64(br) 256(br) 1024(br) 512(bi) 128(bi) 181(bi)", end: "plateau: 181 connections within 5% of the best (128)"},
		{name: "sharp peak", sv: server{thr: sharp}, l: geom(16, 1024, 48),
			path: "16(br) 64(br) 256(br) 128(bi) 181(bi) 152(bi) 166(bi)",
			end:  "best at 152 connections, no gap beside it left to bisect (within ±5%, no count inside, or the rate per connection held below it)"},
		{name: "objective boundary", objective: true, l: geom(16, 1024, 48), sv: server{
			thr: func(b, c int) float64 { return 300 * float64(c) }, good: func(b, c int) bool { return c <= 424 }},
			path: "16(br) 64(br) 256(br) 1024(br) 512(bi) 362(bi) 431(bi) 395(bi)", end: "budget of 8 points spent"},
		{name: "objective met at the top", objective: true, l: geom(16, 1024, 48), sv: server{thr: peak},
			path: "16(br) 64(br) 256(br) 1024(br)", end: "the top rung meets the objective"},
		{name: "a failed point is stepped past", sv: server{thr: func(b, c int) float64 {
			if c == 64 {
				return 0
			}
			return math.Min(1000*float64(c), 100e3)
		}}, l: geom(16, 1024, 48), path: "16(br) 64(br) 256(br) 1024(br)", end: "plateau: 1024 connections within 5% of the best (256)"},
		{name: "nothing measured cleanly", sv: server{thr: peak, good: func(int, int) bool { return false }}, l: geom(16, 1024, 48),
			path: "16(br)", end: "no point measured cleanly"},
		{name: "a coarse ladder gets its bracket only", sv: server{thr: peak}, l: []int{16, 32, 64, 128, 256},
			path: "16(br) 64(br) 256(br)", end: "budget of 3 points spent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sv := tc.sv
			sv.headline = 10
			s := NewSweep(SweepPlan{Batches: []int{10}, Conns: ladder(map[int][]int{10: tc.l}), Reps: 1, HeadlineBatch: 10,
				Bisect: true, Objective: tc.objective})
			got := drive(t, s, &sv)
			if p := sweepPath(got, 10, 0); p != tc.path {
				t.Errorf("path %s, want %s", p, tc.path)
			}
			if n := s.Notes(); len(n) != 1 || !strings.HasSuffix(n[0], ": "+tc.end) {
				t.Errorf("notes %q, want the end %q", n, tc.end)
			}
			for i, p := range got {
				if p.Role == result.RoleSweep && (p.Step != i+1 || p.Reason == "") {
					t.Errorf("point %d: step %d, reason %q", i, p.Step, p.Reason)
				}
			}
			if last := got[len(got)-1]; sv.best.Clean && (last.Role != result.RoleAARepeat || last.Key != key(10, sv.best.Connections, 1)) {
				t.Errorf("last %+v, want the A-A repeat of the peak at %d", last, sv.best.Connections)
			}
		})
	}
}

// The searches of several batches interleave as the ladder does, reps
// the outer loop, each rep a search of its own; the notes say how each
// rep's ended.
func TestSweepBisectInterleaves(t *testing.T) {
	sv := &server{headline: 10, thr: func(b, c int) float64 { return math.Min(1000*float64(c), 100e3) }}
	l := geom(16, 1024, 24)
	s := NewSweep(SweepPlan{Batches: []int{10, 100}, Conns: ladder(map[int][]int{10: l, 100: l}), Reps: 2, HeadlineBatch: 10, Bisect: true})
	got := drive(t, s, sv)
	var order []string
	for _, p := range got[:6] {
		order = append(order, fmt.Sprintf("%d/%d@%d", p.Key.Batch, p.Key.Connections, p.Key.Rep))
	}
	if o := strings.Join(order, " "); o != "10/16@0 100/16@0 10/64@0 100/64@0 10/256@0 100/256@0" {
		t.Errorf("first points %s", o)
	}
	if a, b := sweepPath(got, 10, 0), sweepPath(got, 10, 1); a != b || a == "" {
		t.Errorf("rep 0 %s, rep 1 %s: want the same search", a, b)
	}
	n := s.Notes()
	if len(n) != 2 || !strings.Contains(n[1], "SEARCH=bisect: batch 100: ") || !strings.Contains(n[1], "; rep 1: plateau") {
		t.Errorf("notes %q", n)
	}
	if last := got[len(got)-1]; last.Role != result.RoleAARepeat || last.Key.Rep != 2 {
		t.Errorf("last %+v", last)
	}
}

func TestSearchBudget(t *testing.T) {
	for _, tc := range []struct {
		l    []int
		want int
	}{
		{geom(16, 1024, 48), 8}, {geom(16, 1024, 24), 8}, {geom(2, 128, 24), 7}, {[]int{16, 32, 64, 128, 256}, 3},
		{[]int{7}, 1}, {[]int{1, 1000}, 6}, {nil, 0},
	} {
		if got := SearchBudget(tc.l); got != tc.want {
			t.Errorf("SearchBudget(%v) = %d, want %d", tc.l, got, tc.want)
		}
	}
	if n := SearchTotal([]int{10, 100}, func(int) []int { return geom(16, 1024, 48) }, 3); n != 48 {
		t.Errorf("SearchTotal = %d, want 2 batches x 8 x 3 reps", n)
	}
}

package harness

import (
	"bytes"
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/plancost"
	"github.com/ceiling-bench/ceiling/harness/progress"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// A plan of more than 24 hours of load is refused before anything boots,
// naming ALLOW_LONG and the knobs that make it long; ALLOW_LONG=1 runs
// it; the default plans pass.
func TestResolveRefusesALongPlan(t *testing.T) {
	long := func() knob.Options {
		o := knob.DefaultOptions(false)
		o.Reps = knob.MaxReps
		o.Duration, o.Warmup = knob.MaxDuration, knob.MaxDuration
		return o
	}
	o := long()
	_, err := ResolveKnobs(o, pinning.CPUSet{0, 1})
	if err == nil || !strings.Contains(err.Error(), "ALLOW_LONG (--allow-long): the plan holds up to") || !strings.Contains(err.Error(), "above the limit of 24 hours") {
		t.Fatalf("a plan of %d reps of 2 h points: %v, want it refused naming ALLOW_LONG", o.Reps, err)
	}
	o.AllowLong = true
	if _, err := ResolveKnobs(o, pinning.CPUSet{0, 1}); err != nil {
		t.Fatalf("ALLOW_LONG=1: %v", err)
	}
	// Two-arm: the re-run blocks count (twice COMPARE_REPS per batch).
	o = knob.DefaultOptions(false)
	o.BaseTargetFile, o.CompareScope = "base.json", result.ScopeCurve
	o.CompareReps = knob.MaxCompareReps
	o.CompareDuration, o.CompareWarmup = knob.MaxDuration, knob.MaxDuration
	if _, err := ResolveKnobs(o, pinning.CPUSet{0, 1}); err == nil || !strings.Contains(err.Error(), "ALLOW_LONG") {
		t.Fatalf("a two-arm plan of 100 blocks of 2 h repeats: %v, want it refused", err)
	}
	for _, quick := range []bool{false, true} {
		o := knob.DefaultOptions(quick)
		if _, err := ResolveKnobs(o, pinning.CPUSet{0, 1}); err != nil {
			t.Errorf("default plan (quick %v): %v", quick, err)
		}
		o.BaseTargetFile = "base.json"
		o.SetTwoArmDefaults("") // as the CLI does
		p, err := ResolveKnobs(o, pinning.CPUSet{0, 1})
		if err != nil {
			t.Fatalf("default two-arm plan (quick %v): %v", quick, err)
		}
		// The budget's blocks, by hand: the first pass at its most (the
		// headline batch's rungs and one point per other batch, both
		// arms), each point its warm-up, window and plancost.PointOverhead, then
		// blocks of two compare repeats.
		first := 2 * (len(o.ConnsLadders.For(o.HeadlineBatch, quick)) + len(o.BatchLadder) - 1)
		per := o.Warmup + o.Duration + plancost.PointOverhead
		block := 2 * (o.CompareWarmup + o.CompareDuration + plancost.PointOverhead)
		want := int((o.CompareBudget - time.Duration(first)*per) / block)
		if p.Compare.Reps != want || p.Compare.Scope != result.ScopeHeadline || p.Compare.Stop != result.StopOBF {
			t.Errorf("quick %v: %d blocks under %s, scope %s, stop %s; want %d, headline, obf", quick, p.Compare.Reps, o.CompareBudget, p.Compare.Scope, p.Compare.Stop, want)
		}
		if pl := p.Planned(); pl.Load > o.CompareBudget {
			t.Errorf("quick %v: planned load %s beyond the budget %s", quick, pl.Load, o.CompareBudget)
		}
		// One second less than the first pass and 6 blocks: refused
		// before anything boots, saying what it needs.
		o.CompareBudget = time.Duration(first)*per + 6*block - time.Second
		if _, err := ResolveKnobs(o, pinning.CPUSet{0, 1}); err == nil || !strings.Contains(err.Error(), "COMPARE_BUDGET (--compare-budget)") || !strings.Contains(err.Error(), "the 6 blocks the paired test needs") {
			t.Errorf("quick %v: a budget short of 6 blocks: %v", quick, err)
		}
		o.CompareBudget += time.Second
		if p, err := ResolveKnobs(o, pinning.CPUSet{0, 1}); err != nil || p.Compare.Reps != 6 {
			t.Errorf("quick %v: a budget of exactly 6 blocks: %v", quick, err)
		}
	}
}

// Planned counts what the plan line states: the default sweep's points
// and load, by hand.
func TestPlannedDefault(t *testing.T) {
	o := knob.DefaultOptions(false)
	p, err := ResolveKnobs(o, pinning.CPUSet{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, b := range p.Schedule.BatchLadder {
		n += len(p.Schedule.ConnsLadder(b))
	}
	pl := p.Planned()
	want := n + 1 // the A-A repeat
	if pl.Points != want || pl.MaxPoints != want || pl.Load != time.Duration(want)*(o.Warmup+o.Duration) || pl.MaxLoad != pl.Load {
		t.Errorf("Planned %+v, want %d points of %s each", pl, want, o.Warmup+o.Duration)
	}
}

// FuzzPlanned: whatever the knobs, a plan that resolves states its points
// and load exactly (checked in arbitrary precision) or saturated, never
// wrapped; one past the bound resolves only with ALLOW_LONG; and the plan
// line never shows a negative figure.
func FuzzPlanned(f *testing.F) {
	f.Add(uint8(5), uint8(6), uint8(1), uint32(10), uint32(3), uint8(8), false, false, false)
	f.Add(uint8(64), uint8(64), uint8(100), uint32(3600), uint32(3600), uint8(100), true, false, true)
	f.Add(uint8(64), uint8(64), uint8(100), uint32(3600), uint32(3600), uint8(100), false, true, true)
	f.Add(uint8(200), uint8(1), uint8(1), uint32(1), uint32(0), uint8(8), false, false, false)
	f.Fuzz(func(t *testing.T, batches, conns, reps uint8, durS, warmS uint32, compareReps uint8, twoArm, bisect, allowLong bool) {
		o := knob.DefaultOptions(false)
		o.BatchLadder, o.ConnsLadders = nil, knob.ConnsLadders{}
		for b := 1; b <= int(batches); b++ {
			o.BatchLadder = append(o.BatchLadder, b)
			var l knob.Ladder
			for c := 1; c <= int(conns); c++ {
				l = append(l, c)
			}
			o.ConnsLadders[b] = l
		}
		o.HeadlineBatch = 1
		o.Reps = int(reps)
		o.Duration, o.Warmup = time.Duration(durS)*time.Second, time.Duration(warmS)*time.Second
		o.CompareDuration, o.CompareWarmup = o.Duration, o.Warmup
		o.CompareReps = int(compareReps)
		if twoArm {
			o.BaseTargetFile = "base.json"
		}
		if bisect {
			o.Search = knob.SearchBisect
		}
		o.AllowLong = allowLong
		p, err := ResolveKnobs(o, pinning.CPUSet{0, 1})
		if err != nil {
			return // refused before boot: what the knob tests check
		}
		pl := p.Planned()
		if pl.Points <= 0 || pl.MaxPoints < pl.Points || pl.Load < 0 || pl.MaxLoad < pl.Load {
			t.Fatalf("Planned %+v", pl)
		}
		exact := func(points int, per time.Duration) *big.Int {
			return new(big.Int).Mul(big.NewInt(int64(points)), big.NewInt(int64(per)))
		}
		per := o.Warmup + o.Duration
		var want, wantMax *big.Int
		if twoArm {
			compared := 2 * o.CompareReps * len(o.BatchLadder)
			first := pl.Points - compared
			want = new(big.Int).Add(exact(first, per), exact(compared, per))
			wantMax = new(big.Int).Add(exact(first, per), exact(2*compared, per))
		} else {
			want = exact(pl.Points, per)
			wantMax = want
		}
		for _, c := range []struct {
			got  time.Duration
			want *big.Int
		}{{pl.Load, want}, {pl.MaxLoad, wantMax}} {
			if c.want.IsInt64() && big.NewInt(int64(c.got)).Cmp(c.want) != 0 || !c.want.IsInt64() && c.got != math.MaxInt64 {
				t.Fatalf("load %d, exact %s", c.got, c.want)
			}
		}
		if !allowLong && pl.MaxLoad > knob.MaxPlannedLoad {
			t.Fatalf("a plan of %s at most resolved without ALLOW_LONG", pl.MaxLoad)
		}
		var line bytes.Buffer
		progress.Plan(&line, pl.Points, pl.Parts, pl.Load)
		if regexp.MustCompile(`-[0-9]`).MatchString(line.String()) {
			t.Fatalf("plan line %q", line.String())
		}
	})
}

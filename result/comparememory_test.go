package result

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// memBlocks are n blocks whose server memory per connection is about
// base (noise up to ±jitter bytes per repeat) on the base arm and
// base+shift on the head's.
func memBlocks(n int, base, shift, jitter float64, seed uint64) []Point {
	rng := rand.New(rand.NewPCG(seed, 1))
	mk := func(i int, arm string, pc float64) Point {
		v := pc + (rng.Float64()*2-1)*jitter
		return Point{Index: i, Role: RoleCompare, Arm: arm, Rep: i / 2, Batch: 1, Connections: 5000, Status: StatusOK, Clean: true,
			ThroughputPerS: 500, ServerMemory: &Memory{Measure: MemoryPSS, PerConnectionBytes: &v}}
	}
	var ps []Point
	for b := range n {
		// ABBA: which arm runs first alternates.
		first, second := ArmBase, ArmHead
		if b%2 == 1 {
			first, second = second, first
		}
		for k, arm := range []string{first, second} {
			pc := base
			if arm == ArmHead {
				pc += shift
			}
			ps = append(ps, mk(2*b+k, arm, pc))
		}
	}
	return ps
}

func TestMemoryComparisonCallsAPlantedBallastHigher(t *testing.T) {
	// refserver's ~24 KB a connection, 4096 B more on the head, noise
	// of ±1 KB per repeat.
	cp := ComparePoint(1, 5000, memBlocks(8, 24_000, 4096, 1000, 1), 0.05, StopFixed, 8)
	m := cp.Memory
	if m == nil || m.Verdict != MemoryHigher || m.NPairs != 8 || *m.ChangeBytes < 3000 || *m.ChangeBytes > 5200 || m.Measure != MemoryPSS {
		t.Fatalf("memory %+v: want higher by about 4096 B over 8 pairs", m)
	}
	if !strings.Contains(m.Reason, "higher: p < 0.05") {
		t.Errorf("reason %q", m.Reason)
	}
	// The same arms swapped: lower.
	if cp := ComparePoint(1, 5000, memBlocks(8, 28_096, -4096, 1000, 1), 0.05, StopFixed, 8); cp.Memory.Verdict != MemoryLower {
		t.Errorf("swapped: %+v", cp.Memory)
	}
}

func TestMemoryComparisonAAIsNotCalled(t *testing.T) {
	calls := 0
	for seed := range uint64(40) {
		m := ComparePoint(1, 5000, memBlocks(8, 24_000, 0, 1000, seed), 0.05, StopFixed, 8).Memory
		if m.Verdict == MemoryHigher || m.Verdict == MemoryLower {
			calls++
		}
		if m.Verdict == CompareWithinNoise && (m.MDCBytes == nil || *m.MDCBytes <= 0) {
			t.Errorf("seed %d: within noise without what it could detect: %+v", seed, m)
		}
	}
	// At alpha 0.05 the test may call about 2 of 40 A/A runs by chance;
	// more than 6 is no longer chance (binomial, p < 0.01).
	if calls > 6 {
		t.Errorf("%d of 40 A/A runs called a change", calls)
	}
}

func TestMemoryComparisonWithoutEnoughPairs(t *testing.T) {
	ps := memBlocks(8, 24_000, 4096, 1000, 3)
	for i := range ps {
		if ps[i].Rep >= 4 && ps[i].Arm == ArmHead {
			ps[i].ServerMemory.PerConnectionBytes = nil // no baseline on those
		}
	}
	m := ComparePoint(1, 5000, ps, 0.05, StopFixed, 8).Memory
	if m.Verdict != CompareCannotConclude || m.NPairs != 4 || !strings.Contains(m.Reason, "6 are needed") {
		t.Errorf("4 pairs: %+v", m)
	}
	// Different measures in a block: that block does not count.
	ps = memBlocks(8, 24_000, 4096, 1000, 3)
	ps[0].ServerMemory.Measure = MemoryRSS
	if m := ComparePoint(1, 5000, ps, 0.05, StopFixed, 8).Memory; m.NPairs != 7 {
		t.Errorf("a block of two measures counted: %+v", m)
	}
	// No memory anywhere: nothing to say.
	for i := range ps {
		ps[i].ServerMemory = nil
	}
	if m := ComparePoint(1, 5000, ps, 0.05, StopFixed, 8).Memory; m != nil {
		t.Errorf("no memory read: %+v", m)
	}
}

// The terminal's comparison says the memory verdict under its table.
func TestComparisonTableSaysTheMemory(t *testing.T) {
	cp := ComparePoint(1, 5000, memBlocks(8, 24_000, 4096, 1000, 1), 0.05, StopFixed, 8)
	var b strings.Builder
	if err := WriteComparison(&b, &Comparison{Alpha: 0.05, Confidence: 0.95, Reps: 8, Headline: cp, Points: []ComparedPoint{cp}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "batch 1: server memory per connection higher: p < 0.05 (base 24.") {
		t.Errorf("comparison:\n%s", b.String())
	}
}

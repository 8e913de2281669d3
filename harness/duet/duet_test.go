package duet

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/pinning"
)

func TestHalves(t *testing.T) {
	o := knob.CPUs{Server: pinning.CPUSet{1}, Generator: pinning.CPUSet{0}, DuetServer: pinning.CPUSet{3}, DuetGenerator: pinning.CPUSet{2}}
	if h := Halves(o, knob.ModeInterleaved); h != nil {
		t.Errorf("interleaved: halves %v, want none", h)
	}
	h := Halves(o, knob.ModeDuet)
	want := []*Half{{Name: HalfA, Server: pinning.CPUSet{1}, Generator: pinning.CPUSet{0}}, {Name: HalfB, Server: pinning.CPUSet{3}, Generator: pinning.CPUSet{2}}}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("duet: halves %+v, want %+v", h, want)
	}
	if HalfName(nil) != HalfA || HalfName(h[1]) != HalfB {
		t.Errorf("HalfName: nil %q, b %q", HalfName(nil), HalfName(h[1]))
	}
}

// The gate opens only once both generators are ready, on one instant for
// both; an abandoned gate opens at once, and a half that registers after
// that is let through at the next poll.
func TestGate(t *testing.T) {
	dir := t.TempDir()
	a, b := &Half{Name: HalfA}, &Half{Name: HalfB}
	fa, fb := filepath.Join(dir, "a.gate"), filepath.Join(dir, "b.gate")
	ready := func(f string) {
		if err := os.WriteFile(f+".ready", nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	opened := func(f string) string {
		b, err := os.ReadFile(f)
		if err != nil {
			return ""
		}
		return string(b)
	}

	g := NewGate()
	g.Register(a, fa, 10, 11)
	g.Register(b, fb, 20)
	if got := g.Partners(a); !reflect.DeepEqual(got, []int{20}) {
		t.Errorf("a's partners %v, want [20]", got)
	}
	if got := g.Partners(b); !reflect.DeepEqual(got, []int{10, 11}) {
		t.Errorf("b's partners %v, want [10 11]", got)
	}
	ready(fa)
	if err := g.Poll(); err != nil || opened(fa) != "" || opened(fb) != "" {
		t.Fatalf("one generator ready: poll %v, gates %q %q, want both closed", err, opened(fa), opened(fb))
	}
	ready(fb)
	if err := g.Poll(); err != nil || opened(fa) == "" || opened(fa) != opened(fb) {
		t.Fatalf("both ready: poll %v, gates %q %q, want both open on one instant", err, opened(fa), opened(fb))
	}

	g = NewGate()
	fa, fb = filepath.Join(dir, "a2.gate"), filepath.Join(dir, "b2.gate")
	g.Register(a, fa)
	g.Abandon()
	if opened(fa) == "" {
		t.Fatal("an abandoned gate did not open a's at once")
	}
	g.Register(b, fb)
	if err := g.Poll(); err != nil || opened(fb) != opened(fa) {
		t.Fatalf("a half registered after the gate opened: poll %v, gate %q, want %q", err, opened(fb), opened(fa))
	}
}

// Package duet runs a two-arm block's repeats at the same time (COMPARE_MODE=duet,
// docs/compare.md "Duet mode"; Bulej et al., ICPE 2020): each arm on its
// own half of the machine, so that a neighbour's noise lands on both and
// cancels in their ratio, and both generators started on one instant by a
// Gate. It holds the halves and the gate; the harness runs the points.
package duet

import (
	"os"
	"slices"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
)

// Half a is SRV_CPUSET + LT_CPUSET, half
// b DUET_CPUSETS (or pinning.DuetHalf's pick). The arm that goes first in
// the ABBA order takes half a, so the halves swap from block to block and
// a slower half cannot pose as a slower server. Both generators are
// started by one Gate: each connects, then waits, and their loads (then
// warm-ups and windows) start on one instant (load --start-gate).

// The halves' names (Point.Half).
const (
	HalfA = "a"
	HalfB = "b"
)

// Half is one half of a duet split.
type Half struct {
	Name              string
	Server, Generator pinning.CPUSet
}

// Halves are the two halves of o's sets, or nil when mode is no duet.
func Halves(o knob.CPUs, mode string) []*Half {
	if mode != knob.ModeDuet {
		return nil
	}
	return []*Half{
		{Name: HalfA, Server: o.Server, Generator: o.Generator},
		{Name: HalfB, Server: o.DuetServer, Generator: o.DuetGenerator},
	}
}

// gateLead is how far ahead of the moment both generators are ready the
// gate sets their start: long enough for both to read it.
const gateLead = 50 * time.Millisecond

// Gate starts a duet block's two generators on one instant. Each point
// registers its gate file and its processes; the gate opens (writes every
// registered file with one start time) once every generator has said it
// is ready, or at once when a point gave up (Abandon): its partner then
// runs alone, and the block is lost either way.
type Gate struct {
	mu      sync.Mutex
	files   map[string]string // half -> its generator's --start-gate
	written map[string]bool
	pids    map[string][]int // half -> its servers and generator
	at      time.Time        // zero until opened
}

// NewGate is a closed gate for one block.
func NewGate() *Gate {
	return &Gate{files: map[string]string{}, written: map[string]bool{}, pids: map[string][]int{}}
}

// HalfName is h's name; a nil half (no duet) is half a.
func HalfName(h *Half) string {
	if h == nil {
		return HalfA
	}
	return h.Name
}

// Register records a half's gate file and its processes.
func (g *Gate) Register(h *Half, file string, pids ...int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.files[HalfName(h)] = file
	g.pids[HalfName(h)] = append(g.pids[HalfName(h)], pids...)
}

// Partners are the processes of every half but h's.
func (g *Gate) Partners(h *Half) []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []int
	for name, pids := range g.pids {
		if name != HalfName(h) {
			out = append(out, pids...)
		}
	}
	slices.Sort(out)
	return out
}

// Poll opens the gate once both halves' generators are ready, and writes
// the gate of a half that registered after it opened (its partner gave
// up). It returns the error of a gate file that could not be written.
func (g *Gate) Poll() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.at.IsZero() {
		if len(g.files) < 2 {
			return nil
		}
		for _, f := range g.files {
			if _, err := os.Stat(load.GateReady(f)); err != nil {
				return nil
			}
		}
		g.at = time.Now().Add(gateLead)
	}
	return g.writeLocked()
}

// Abandon opens the gate at once: a point failed or was interrupted
// before its load, and its partner must not wait for it.
func (g *Gate) Abandon() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.at.IsZero() {
		g.at = time.Now()
	}
	_ = g.writeLocked() // a partner that cannot read its gate fails at its marker
}

func (g *Gate) writeLocked() error {
	var files []string
	for name, f := range g.files {
		if !g.written[name] {
			files = append(files, f)
			g.written[name] = true
		}
	}
	if len(files) == 0 {
		return nil
	}
	return load.OpenGates(g.at, files...)
}

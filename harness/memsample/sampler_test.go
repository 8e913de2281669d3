package memsample

import (
	"context"
	"errors"
	"os"
	"runtime"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/internal/procfs"
)

// script is a reader whose processes' memory a test sets between ticks.
type script map[int]procfs.Memory

func (s script) read(pid int) (procfs.Memory, error) {
	m, ok := s[pid]
	if !ok {
		return procfs.Memory{}, errors.New("gone")
	}
	return m, nil
}

func pss(p, r uint64) procfs.Memory { return procfs.Memory{PSSBytes: p, RSSBytes: r, HasPSS: true} }

func TestReadSumsATreeAndFallsBackToRSSWhole(t *testing.T) {
	s := script{1: pss(100, 150), 2: pss(50, 120)}
	r := readWith(cpusample.PIDs(1, 2, 3), s.read) // 3 is gone: skipped
	if want := (Reading{PSS: true, PSSBytes: 150, RSSBytes: 270, Processes: 2}); r != want || r.Measure() != PSS {
		t.Errorf("got %+v (%s), want %+v", r, r.Measure(), want)
	}
	// One process without smaps_rollup: the reading is RSS, whole.
	s[2] = procfs.Memory{RSSBytes: 120}
	if r := readWith(cpusample.PIDs(1, 2), s.read); r.PSS || r.Measure() != RSS || r.RSSBytes != 270 {
		t.Errorf("mixed: got %+v (%s), want an RSS reading of 270", r, r.Measure())
	}
	if r := readWith(cpusample.PIDs(9), s.read); r.OK() || r.PSS || r.Measure() != "" {
		t.Errorf("nothing read: %+v", r)
	}
}

func TestGroupPeakIsThePeakOfTheSum(t *testing.T) {
	s := script{1: pss(100, 100), 2: pss(10, 10)}
	g := newGroup(0, s.read, cpusample.PIDs(1), cpusample.PIDs(2))
	g.tick()                                // 110
	s[1], s[2] = pss(200, 200), pss(10, 10) // 210: part 1's peak
	g.tick()
	s[1], s[2] = pss(120, 120), pss(80, 80) // 200: part 2's peak, not the sum's
	g.tick()
	s[1], s[2] = pss(150, 150), pss(20, 20) // 170: the end
	g.tick()
	g.stopped.Do(func() {}) // Stop without its loop or final read
	total, parts := g.total, g.parts
	if total.PeakPSS != 210 || total.EndPSS != 170 || total.Samples != 4 || total.Measure() != PSS || total.Processes != 2 {
		t.Errorf("total %+v: want peak 210 (of the sum at one instant, not 200+80), end 170", total)
	}
	if parts[0].PeakPSS != 200 || parts[1].PeakPSS != 80 || parts[1].EndPSS != 20 {
		t.Errorf("parts %+v", parts)
	}
}

func TestAWindowWithOneRSSReadingIsRSS(t *testing.T) {
	s := script{1: pss(100, 300)}
	g := newGroup(0, s.read, cpusample.PIDs(1))
	g.tick()
	s[1] = procfs.Memory{RSSBytes: 400}
	g.tick()
	if got := g.total; got.Measure() != RSS || got.PeakRSS != 400 || got.PeakPSS != 100 {
		t.Errorf("got %+v (%s): want rss, its peak 400", got, got.Measure())
	}
	delete(s, 1)
	g.tick() // nothing read: not a sample
	if g.total.Samples != 2 || g.parts[0].Samples != 2 {
		t.Errorf("a tick that read nothing counted: %+v", g.total)
	}
}

func TestReadAndSampleThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc")
	}
	self := cpusample.PIDs(os.Getpid())
	r := Read(self)
	if !r.OK() || r.RSSBytes == 0 {
		t.Fatalf("self: %+v", r)
	}
	if _, err := os.Stat("/proc/self/smaps_rollup"); err == nil && (!r.PSS || r.PSSBytes == 0 || r.PSSBytes > r.RSSBytes) {
		t.Errorf("self with smaps_rollup: %+v", r)
	}
	g := StartGroup(context.Background(), 0, self)
	total, parts := g.Stop()
	again, _ := g.Stop()
	// One read as it starts and one as it stops, whatever the clock did.
	if total.Samples < 2 || len(parts) != 1 || parts[0].Samples != total.Samples || total.PeakRSS == 0 || again != total {
		t.Errorf("total %+v, parts %+v, again %+v", total, parts, again)
	}
}

// A tick at which one tree read nothing (its process gone) is no reading
// of the sum, and does not turn the sum's measure to RSS.
func TestATreeThatReadNothingLeavesTheSumAlone(t *testing.T) {
	s := script{1: pss(100, 150), 2: pss(10, 20)}
	g := newGroup(0, s.read, cpusample.PIDs(1), cpusample.PIDs(2))
	g.tick()
	delete(s, 2) // gone at the window's end
	s[1] = pss(300, 350)
	g.tick()
	if got := g.total; got.Samples != 1 || got.Measure() != PSS || got.PeakPSS != 110 || got.EndPSS != 110 {
		t.Errorf("total %+v (%s): want the one whole reading, in PSS", got, got.Measure())
	}
	if p := g.parts[0]; p.PeakPSS != 300 || p.Samples != 2 {
		t.Errorf("the tree that read: %+v", p)
	}
}

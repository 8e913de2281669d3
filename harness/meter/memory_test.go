package meter

import (
	"testing"

	"github.com/ceiling-bench/ceiling/harness/memsample"
	"github.com/ceiling-bench/ceiling/internal/wire"
	"github.com/ceiling-bench/ceiling/result"
)

func u(v uint64) *uint64 { return &v }

func TestMemoryIsASlopeFromTheBaseline(t *testing.T) {
	w := memsample.Stats{Samples: 12, PSS: true, PeakPSS: 30_000_000, EndPSS: 29_000_000, PeakRSS: 40_000_000, EndRSS: 39_000_000}
	m := Memory(w, ReadingBaseline(memsample.Reading{PSS: true, PSSBytes: 10_000_000, RSSBytes: 18_000_000, Processes: 1}), 1000)
	pc, ok := m.PerConnection()
	if !ok || m.Measure != result.MemoryPSS || pc != 20_000 || *m.BaselineBytes != 10_000_000 || m.PeakBytes != 30_000_000 ||
		m.EndBytes != 29_000_000 || m.RSSPeakBytes != 40_000_000 || m.Connections != 1000 || m.Samples != 12 || m.Why != "" {
		t.Errorf("got %+v (per connection %v), want pss, (30 MB - 10 MB) / 1000 = 20000", m, pc)
	}
	// A baseline that read only RSS: the window falls back to RSS whole.
	m = Memory(w, Baseline{RSS: u(20_000_000)}, 1000)
	if pc, _ := m.PerConnection(); m.Measure != result.MemoryRSS || pc != 20_000 || m.PeakBytes != 40_000_000 {
		t.Errorf("rss baseline: %+v", m)
	}
	// Memory given back since the baseline: below zero, kept.
	m = Memory(w, Baseline{PSS: u(35_000_000), RSS: u(1)}, 1000)
	if pc, ok := m.PerConnection(); !ok || pc != -5000 {
		t.Errorf("below the baseline: %v, %v; want -5000, never clamped", pc, ok)
	}
}

func TestMemoryWithoutAFigureSaysWhy(t *testing.T) {
	w := memsample.Stats{Samples: 3, PSS: true, PeakPSS: 5, EndPSS: 5, PeakRSS: 9, EndRSS: 9}
	for name, c := range map[string]struct {
		base  Baseline
		conns int
	}{
		"no baseline":         {ReadingBaseline(memsample.Reading{}), 10},
		"another measure":     {Baseline{PSS: u(1)}, 10}, // an RSS window below
		"no connection open":  {Baseline{PSS: u(1), RSS: u(1)}, 0},
		"no generator report": {GeneratorBaseline(nil), 10},
	} {
		win := w
		if name == "another measure" {
			win.PSS = false
		}
		m := Memory(win, c.base, c.conns)
		if _, ok := m.PerConnection(); ok || m.Why == "" {
			t.Errorf("%s: %+v: want no figure, and why", name, m)
		}
	}
	if m := Memory(memsample.Stats{}, Baseline{PSS: u(1)}, 10); m != nil {
		t.Errorf("a window that read nothing: %+v, want none", m)
	}
}

func TestServerMemorySumsAndNamesEachServer(t *testing.T) {
	w := Window{
		ServerMemory:      memsample.Stats{Samples: 2, PSS: true, PeakPSS: 300, EndPSS: 250, PeakRSS: 400, EndRSS: 350},
		ServerMemoryParts: []memsample.Stats{{Samples: 2, PSS: true, PeakPSS: 200, EndPSS: 150, PeakRSS: 250}, {Samples: 2, PSS: true, PeakPSS: 110, EndPSS: 100, PeakRSS: 150}},
	}
	bases := []Baseline{{PSS: u(50), RSS: u(60)}, {PSS: u(50), RSS: u(60)}}
	m := ServerMemory(w, bases, []string{"node1", "node2"}, 10)
	if pc, _ := m.PerConnection(); pc != 20 || *m.BaselineBytes != 100 || len(m.Servers) != 2 {
		t.Fatalf("got %+v: want (300 - 100) / 10 = 20 over two named servers", m)
	}
	if s := m.Servers[1]; s.Name != "node2" || s.PeakBytes != 110 || *s.BaselineBytes != 50 || s.PerConnectionBytes != nil {
		t.Errorf("node2: %+v", s)
	}
	// One server whose baseline read only RSS: the sum is RSS.
	bases[1].PSS = nil
	if m := ServerMemory(w, bases, []string{"node1", "node2"}, 10); m.Measure != result.MemoryRSS || *m.BaselineBytes != 120 {
		t.Errorf("mixed baselines: %+v, want rss over 120", m)
	}
}

func TestTheGeneratorsOwnReport(t *testing.T) {
	g := &wire.GeneratorMemory{Measure: "pss", BeforeConnectBytes: 8_000_000, WindowStartBytes: 10_000_000, WindowEndBytes: 9_000_000}
	m := Memory(SelfReported(g), GeneratorBaseline(g), 1000)
	if pc, _ := m.PerConnection(); m.Measure != result.MemoryPSS || pc != 2000 || m.PeakBytes != 10_000_000 || m.RSSPeakBytes != 0 {
		t.Errorf("got %+v: want pss, (10 MB - 8 MB) / 1000, and no RSS figure it never read", m)
	}
	if s := SelfReported(nil); s.Samples != 0 {
		t.Errorf("no report: %+v", s)
	}
}

package meter

import (
	"github.com/ceiling-bench/ceiling/harness/memsample"
	"github.com/ceiling-bench/ceiling/internal/wire"
	"github.com/ceiling-bench/ceiling/result"
)

// Baseline is one side's memory before any connection, in both
// measures where it was read in both: the servers' read by the harness
// after they were ready (memsample.Read), the generator's as it
// reported it (its generator.memory). Why says why there is none.
type Baseline struct {
	PSS, RSS *uint64
	Why      string
}

// ReadingBaseline is the baseline of a harness reading; none when it
// read nothing.
func ReadingBaseline(r memsample.Reading) Baseline {
	if !r.OK() {
		return Baseline{Why: "the baseline before the connections read no process"}
	}
	b := Baseline{RSS: &r.RSSBytes}
	if r.PSS {
		b.PSS = &r.PSSBytes
	}
	return b
}

// SumBaselines adds the baselines of several servers: a measure is in the
// sum only when every server has it.
func SumBaselines(bs []Baseline) Baseline {
	var pss, rss uint64
	hasPSS, hasRSS := len(bs) > 0, len(bs) > 0
	for _, b := range bs {
		if b.Why != "" {
			return b
		}
		if b.PSS == nil {
			hasPSS = false
		} else {
			pss += *b.PSS
		}
		if b.RSS == nil {
			hasRSS = false
		} else {
			rss += *b.RSS
		}
	}
	var sum Baseline
	if hasPSS {
		sum.PSS = &pss
	}
	if hasRSS {
		sum.RSS = &rss
	}
	return sum
}

// Memory is one side's memory over a window against its baseline, per
// connection over conns (the connections open): in PSS when both the
// window and the baseline have it, else in RSS when both have that, else
// without a figure per connection. Nil when the window read nothing.
// Pure: the figures are the Stats' and the Baseline's, as measured.
func Memory(w memsample.Stats, base Baseline, conns int) *result.Memory {
	if w.Samples == 0 {
		return nil
	}
	m := &result.Memory{Samples: w.Samples, RSSPeakBytes: w.PeakRSS, Why: base.Why}
	switch {
	case w.PSS && (base.PSS != nil || base.RSS == nil):
		m.Measure, m.PeakBytes, m.EndBytes, m.BaselineBytes = result.MemoryPSS, w.PeakPSS, w.EndPSS, base.PSS
	default:
		m.Measure, m.PeakBytes, m.EndBytes, m.BaselineBytes = result.MemoryRSS, w.PeakRSS, w.EndRSS, base.RSS
	}
	if m.BaselineBytes == nil && m.Why == "" {
		m.Why = "the baseline was read in another measure than the window: no figure per connection"
	}
	m.SetPerConnection(conns)
	return m
}

// ServerMemory is the servers' memory over a window: their sum against
// the sum of their baselines, per connection over conns, and with
// several servers each one's own under its name (peak, end and baseline;
// its connections are its share, which the window does not say, so no
// figure per connection). bases are in the order of w.ServerMemoryParts
// and names.
func ServerMemory(w Window, bases []Baseline, names []string, conns int) *result.Memory {
	m := Memory(w.ServerMemory, SumBaselines(bases), conns)
	if m == nil || len(names) < 2 || len(w.ServerMemoryParts) != len(names) || len(bases) != len(names) {
		return m
	}
	for i, st := range w.ServerMemoryParts {
		if part := Memory(st, bases[i], 0); part != nil {
			part.Connections, part.PerConnectionBytes, part.Why = 0, nil, ""
			m.Servers = append(m.Servers, result.NamedMemory{Name: names[i], Memory: *part})
		}
	}
	return m
}

// GeneratorBaseline is the generator's baseline as it reported it
// (generator.memory): nil, from a generator that does not report one.
func GeneratorBaseline(g *wire.GeneratorMemory) Baseline {
	if g == nil {
		return Baseline{Why: "the generator reported no memory before connecting (generator_self.memory): no figure per connection"}
	}
	v := g.BeforeConnectBytes
	if g.Measure == result.MemoryPSS {
		return Baseline{PSS: &v}
	}
	return Baseline{RSS: &v}
}

// SelfReported is the generator's window as it read it itself, at the
// window's two edges: what stands for its memory where the harness
// sampled no generator process (remote agents). Zero Stats without a
// report.
func SelfReported(g *wire.GeneratorMemory) memsample.Stats {
	if g == nil {
		return memsample.Stats{}
	}
	peak := max(g.WindowStartBytes, g.WindowEndBytes)
	s := memsample.Stats{Samples: 2, PSS: g.Measure == result.MemoryPSS}
	s.PeakRSS, s.EndRSS = peak, g.WindowEndBytes // an RSS report, or unknown: set below
	if s.PSS {
		s.PeakPSS, s.EndPSS = peak, g.WindowEndBytes
		s.PeakRSS, s.EndRSS = 0, 0
	}
	return s
}

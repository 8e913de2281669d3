package harness

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/memsample"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/supervise/supervisetest"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
)

// Each side's memory goes through the pipeline onto the point: the
// window's readings, the generator's baseline from its own report, per
// connection over the connections it held. The faked server has no
// process to read a baseline from, and its memory says so instead of
// passing off its peak as a cost.
func TestPipelineRecordsMemoryOnBothSides(t *testing.T) {
	m := newRecordedMeter(t)
	m.w.ServerMemory = memsample.Stats{Samples: 4, PSS: true, PeakPSS: 40_000_000, EndPSS: 39_000_000, PeakRSS: 45_000_000, EndRSS: 44_000_000}
	m.w.ServerMemoryParts = []memsample.Stats{m.w.ServerMemory}
	m.w.GeneratorMemory = memsample.Stats{Samples: 4, PSS: true, PeakPSS: 12_000_000, EndPSS: 11_500_000, PeakRSS: 20_000_000, EndRSS: 19_000_000}
	gen := func(spec supervise.Spec, p *supervisetest.Proc) {
		doc := load.Result{SchemaVersion: load.SchemaVersion, Summary: load.Summary{Mode: "closed", ThroughputPerS: 50_000, MeasuredNs: 1e9, ConnectionsRequested: 2, ConnectionsOpen: 2},
			Generator: load.GeneratorStats{Memory: &load.SelfMemory{Measure: "pss", BeforeConnectBytes: 10_000_000, WindowStartBytes: 11_000_000, WindowEndBytes: 11_500_000}}}
		b, _ := json.Marshal(doc)
		_ = os.WriteFile(argAfter(spec.Args, "--measure-marker"), nil, 0o644)
		_ = os.WriteFile(argAfter(spec.Args, "--json"), b, 0o644)
		p.Exit(nil)
	}
	st := &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){
		"server": func(_ supervise.Spec, p *supervisetest.Proc) { p.Log("listening") }, "generator": gen,
	}}
	res := runPipeline(t, pipelinePlan(t, "", nil), st, m, newFakeClock(0))
	pt := res.r.Curve[0]
	g := pt.GeneratorMemory
	if pc, ok := g.PerConnection(); !ok || pc != 1_000_000 || g.Measure != result.MemoryPSS || g.PeakBytes != 12_000_000 || g.Connections != 2 {
		t.Errorf("generator memory %+v: want (12 MB - 10 MB) / 2 connections", g)
	}
	s := pt.ServerMemory
	if s == nil || s.PeakBytes != 40_000_000 || s.RSSPeakBytes != 45_000_000 || s.BaselineBytes != nil || s.PerConnectionBytes != nil || !strings.Contains(s.Why, "baseline") {
		t.Errorf("server memory %+v: want the window's peak, and no figure per connection without a baseline", s)
	}
}

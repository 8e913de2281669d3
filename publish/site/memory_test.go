package site

import (
	"html"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
)

// A run's page shows each point's memory per connection, the headline's
// in its facts, and a connection-scale sweep's ceiling; a run from before
// memory was measured shows dashes, never a 0 nobody read.
func TestSiteShowsMemory(t *testing.T) {
	t.Parallel()
	run := readRun(t, "sweep_real.json")
	r := run.Result
	srv, gen := 17_250.0, 2_900.0
	for i := range r.Curve {
		r.Curve[i].ServerMemory = &result.Memory{Measure: result.MemoryPSS, Samples: 10, PerConnectionBytes: &srv}
		r.Curve[i].GeneratorMemory = &result.Memory{Measure: result.MemoryPSS, Samples: 10, PerConnectionBytes: &gen}
	}
	r.Curve[0].ServerMemory.PerConnectionBytes = nil // no baseline
	r.Curve[0].ServerMemory = &result.Memory{Measure: result.MemoryPSS, Samples: 10}
	r.Config.Scenario = result.ScenarioConnections
	r.Summarize()
	files, err := Build([]Run{run}, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	page := string(files[pageName(r)])
	for _, want := range []string{"<dt>memory per connection</dt><dd>server 17.2 KB, generator 2.90 KB (pss", `<td class="opt">— · 2.90 KB</td>`,
		"<dt>connection ceiling</dt><dd>" + html.EscapeString(result.ConnectionsHeadline(r.ConnectionCeiling))} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	old := readRun(t, "sweep_real.json")
	files, err = Build([]Run{old}, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	page = string(files[pageName(old.Result)])
	if strings.Contains(page, "memory per connection</dt>") || !strings.Contains(page, `<td class="opt">— · —</td>`) || strings.Contains(page, "connection ceiling") {
		t.Errorf("a run without memory: facts or cells invented")
	}
}

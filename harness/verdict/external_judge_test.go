package verdict

import (
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
)

// TestExternalJudge: an external server's CPU from its metrics can make
// a point server-saturated; without it the point never is, and the reason
// says the server's CPU is unknown.
func TestExternalJudge(t *testing.T) {
	gen := result.CPUStats{Samples: 10, MeanCores: 0.3, PinnedCores: 1, FractionMean: 0.3, PinnedBusy: 0.32, StealFraction: 0}
	s := load.Summary{Mode: "closed", ThroughputPerS: 1000}
	self := load.GeneratorStats{RunnableP99Ns: 1000}
	unknown := result.CPUStats{PinnedBusy: -1, StealFraction: -1, Source: CPUUnknown}
	v, why := Judge(DefaultThresholds, unknown, gen, s, self)
	if v != result.VerdictNeither || !strings.Contains(why, "server CPU unknown (external server; give metrics with process_cpu_seconds_total and external_cpus)") {
		t.Errorf("unknown: %s: %s", v, why)
	}
	// Cores known but not how many it has: still unknown, never saturated.
	noCPUs := result.CPUStats{Samples: 2, MeanCores: 4, PinnedBusy: -1, StealFraction: -1, Source: CPUFromMetrics}
	if v, why := Judge(DefaultThresholds, noCPUs, gen, s, self); v != result.VerdictNeither || !strings.Contains(why, "server CPU unknown") {
		t.Errorf("no external_cpus: %s: %s", v, why)
	}
	busy := result.CPUStats{Samples: 2, MeanCores: 1.9, PinnedCores: 2, FractionMean: 0.95, PinnedBusy: -1, StealFraction: -1, Source: CPUFromMetrics}
	if v, why := Judge(DefaultThresholds, busy, gen, s, self); v != result.VerdictServerSaturated || !strings.Contains(why, "process_cpu_seconds_total") {
		t.Errorf("from metrics: %s: %s", v, why)
	}
}

// TestExternalCPU: an external server's CPU is the change of its
// process_cpu_seconds_total over the interval between the reads, against
// external_cpus; without a usable series it is unknown, never 0%.
func TestExternalCPU(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	sm := &result.ServerMetrics{IntervalS: 2, Series: []result.MetricSeries{
		{Name: "other_total", Delta: f(100)},
		{Name: ProcessCPUSeries, Delta: f(3)},
	}}
	c := ExternalCPU(sm, 2)
	if c.Source != CPUFromMetrics || c.Samples != 2 || c.MeanCores != 1.5 || c.FractionMean != 0.75 ||
		c.PinnedCores != 2 || c.PinnedBusy != -1 || c.StealFraction != -1 {
		t.Errorf("from metrics: %+v", c)
	}
	if c := ExternalCPU(sm, 0); c.Source != CPUFromMetrics || c.MeanCores != 1.5 || c.FractionMean != 0 {
		t.Errorf("no external_cpus: %+v", c)
	}
	reset := &result.ServerMetrics{IntervalS: 2, Series: []result.MetricSeries{{Name: ProcessCPUSeries, Delta: f(3), Reset: true}}}
	for name, sm := range map[string]*result.ServerMetrics{"none": nil, "no interval": {}, "reset": reset} {
		if c := ExternalCPU(sm, 2); c.Source != CPUUnknown || c.Samples != 0 || c.MeanCores != 0 || c.PinnedBusy != -1 {
			t.Errorf("%s: %+v, want unknown", name, c)
		}
	}
}

package harness

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/schedule"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
)

func TestContention(t *testing.T) {
	cpuSide := func(own, busy, steal float64) result.CPUStats {
		c := cpuFrac(own, 1)
		c.PinnedBusy, c.StealFraction = busy, steal
		return c
	}
	quiet := cpuSide(0.5, 0.55, 0)
	overlapped := cpuSide(0.4, 0.9, 0)
	overlapped.OverlapCores = 0.45 // the generator's use of the shared CPU
	tests := []struct {
		name     string
		srv, gen result.CPUStats
		want     string // "" for not contended
	}{
		{"quiet", quiet, quiet, ""},
		{"softirq within the margin", cpuSide(0.80, 0.90, 0), quiet, ""},
		{"server cpus full of other work", cpuSide(0.47, 0.98, 0), quiet, "server CPUs 98% busy, 47% of it its own use"},
		{"generator cpus full of other work", quiet, cpuSide(0.3, 1, 0), "generator CPUs 100% busy"},
		{"steal above the threshold", cpuSide(0.5, 0.55, 0.08), quiet, "hypervisor stole 8.0% of the server CPUs (above 5%)"},
		{"steal at the threshold", cpuSide(0.5, 0.55, result.StealMax), quiet, ""},
		{"steal unknown is not contention", cpuSide(0.5, 0.55, -1), cpuSide(0.5, -1, -1), ""},
		{"overlap is the sweep's own work", overlapped, quiet, ""},
	}
	for _, tt := range tests {
		got := result.Contention(tt.srv, tt.gen)
		if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: Contention = %q, want %q", tt.name, got, tt.want)
		}
	}
	// By attribution: the residual no longer decides, foreign tasks do.
	attributed := func(c result.CPUStats, foreign float64, tasks ...result.ForeignTask) result.CPUStats {
		c.Attribution = &result.Attribution{Foreign: foreign, Tasks: tasks}
		return c
	}
	spin := cpuSide(0.07, 0.22, 0) // the generator beside a slow server: 15% of the sweep's own work
	hog := result.ForeignTask{Comm: "stress", Pid: 4242, Fraction: 0.15}
	for _, tt := range []struct {
		name     string
		srv, gen result.CPUStats
		want     string
	}{
		{"an idle generator's residual is the sweep's own", quiet, attributed(spin, 0.004), ""},
		{"a 15% tenant under the old margin", attributed(cpuSide(0.85, 0.99, 0), 0.15, hog), quiet,
			"other processes took 15.0% of the server CPUs (above 3%): stress (pid 4242) 15%"},
		{"foreign at the threshold", attributed(quiet, result.ForeignMax), quiet, ""},
		{"many small tenants", attributed(quiet, 0.05), quiet, "none of them 1% alone"},
		{"steal still counts", attributed(cpuSide(0.5, 0.55, 0.08), 0), quiet, "hypervisor stole 8.0%"},
	} {
		got := result.Contention(tt.srv, tt.gen)
		if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: Contention = %q, want %q", tt.name, got, tt.want)
		}
	}
	// The same overlap without its attribution is contention.
	overlapped.OverlapCores = 0
	if result.Contention(overlapped, quiet) == "" {
		t.Error("an overlapped CPU busy with the other side, unattributed, does not read as contended")
	}
}

// contendedRunner measures every point on a server CPU that another
// process kept busy: every point is contended.
type contendedRunner struct{ steal float64 }

func (c contendedRunner) RunPoint(ctx context.Context, spec PointSpec) verdict.Outcome {
	srv := result.CPUStats{Samples: 4, MeanCores: 0.5, PinnedCores: 1, FractionMean: 0.5, PinnedBusy: 1, StealFraction: c.steal}
	if c.steal > 0 {
		srv.PinnedBusy = 0.5 + c.steal
	}
	gen := result.CPUStats{Samples: 4, MeanCores: 0.5, PinnedCores: 1, FractionMean: 0.5, PinnedBusy: 0.55}
	return verdict.Outcome{Load: &load.Result{Summary: load.Summary{Mode: "closed", ThroughputPerS: 1000, MeasuredNs: 1e9}}, ServerCPU: srv, GeneratorCPU: gen}
}

func TestContendedHeadlineIsNotPublished(t *testing.T) {
	for _, run := range []contendedRunner{{steal: 0}, {steal: 0.1}} {
		r := &result.Result{}
		err := Sweep(context.Background(), sweepOpts(t), run, r, &bytes.Buffer{}, verdict.DefaultThresholds, newFakeClock(0))
		if !errors.Is(err, ErrContended) || !errors.Is(err, ErrNoCleanHeadline) {
			t.Fatalf("steal %v: error %v, want ErrContended (an ErrNoCleanHeadline)", run.steal, err)
		}
		if r.Headline.Clean || r.NoiseFloorPct != nil {
			t.Errorf("headline %+v from contended points", r.Headline)
		}
		for _, p := range r.Curve {
			if p.Clean || !p.Contended || !strings.Contains(p.VerdictReason, "contended") {
				t.Errorf("point %d: clean %v contended %v (%s)", p.Index, p.Clean, p.Contended, p.VerdictReason)
			}
		}
		var b bytes.Buffer
		if err := result.WriteTable(&b, r); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"CONTENDED: 3 of 3 points", "[3] point 3: contended: ", "headline: none", "warning: contended: in 3 of 3 points"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("steal %v: table lacks %q:\n%s", run.steal, want, b.String())
			}
		}
	}
	// A run whose headline failed for another reason keeps the plain error.
	r := &result.Result{}
	err := Sweep(context.Background(), sweepOpts(t), &scripted{thr: map[result.PointKey]float64{{Batch: 100, Connections: 2}: 50}}, r, &bytes.Buffer{}, verdict.DefaultThresholds, newFakeClock(0))
	if !errors.Is(err, ErrNoCleanHeadline) || errors.Is(err, ErrContended) {
		t.Errorf("failed headline: %v, want ErrNoCleanHeadline only", err)
	}
}

// Contenders names the foreign processes across a curve's contended
// points, each at the most it took, largest first, and the steal.
func TestContenders(t *testing.T) {
	at := func(comm string, pid int, f float64) *result.Attribution {
		return &result.Attribution{Foreign: f, Tasks: []result.ForeignTask{{Comm: comm, Pid: pid, Fraction: f}}}
	}
	curve := []result.Point{
		{Contended: true, ServerCPU: result.CPUStats{Attribution: at("stress", 9, 0.2)}},
		{Contended: true, ServerCPU: result.CPUStats{Attribution: at("stress", 9, 0.4)}, GeneratorCPU: result.CPUStats{Attribution: at("go", 7, 0.1)}},
		{Contended: true, GeneratorCPU: result.CPUStats{StealFraction: 0.08, Attribution: &result.Attribution{}}},
		{ServerCPU: result.CPUStats{Attribution: at("quiet", 1, 0.02)}}, // not contended: not named
	}
	want := "other processes took up to 40.0% of the server CPUs (a clean point allows 3%): stress (pid 9) up to 40%; " +
		"other processes took up to 10.0% of the generator CPUs (a clean point allows 3%): go (pid 7) up to 10%; " +
		"the hypervisor stole up to 8.0% of the generator CPUs (a clean point allows 5%)"
	if got := result.Contenders(curve); got != want {
		t.Errorf("Contenders = %q\nwant        %q", got, want)
	}
	if got := result.Contenders([]result.Point{{Contended: true, ServerCPU: cpuSide(0.4, 1, 0)}}); got != "" {
		t.Errorf("a residual-only point named %q", got)
	}
}

func cpuSide(own, busy, steal float64) result.CPUStats {
	c := cpuFrac(own, 1)
	c.PinnedBusy, c.StealFraction = busy, steal
	return c
}

func cpuFrac(f float64, pinned int) result.CPUStats {
	return result.CPUStats{Samples: 8, MeanCores: f * float64(pinned), PinnedCores: pinned, FractionMean: f}
}

// What a schedule reads of a point says whether its CPUs were contended:
// a headline first pass runs such a rung again (schedule.FirstRetries).
func TestObserveContended(t *testing.T) {
	for _, contended := range []bool{false, true} {
		p := result.Point{Status: result.StatusOK, Clean: !contended, Contended: contended, ThroughputPerS: 1000}
		ob := observe(schedule.Point{}, p, true, result.Headline{})
		if ob.Contended != contended || ob.Clean == contended {
			t.Errorf("point contended %v: observed contended %v, clean %v", contended, ob.Contended, ob.Clean)
		}
	}
}

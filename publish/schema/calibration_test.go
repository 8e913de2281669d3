package schema_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/calibrate"
	"github.com/ceiling-bench/ceiling/publish/schema"
	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
)

// meta.calibration and a point's near_generator_cap survive the trip
// through JSON and pass sweep.schema.json; a broken calibration fails it,
// naming the field.
func TestCalibrationRoundTrip(t *testing.T) {
	t.Parallel()
	s, err := schema.Compile(schema.Sweep)
	if err != nil {
		t.Fatal(err)
	}
	r := result.Result{SchemaVersion: result.SchemaVersion, Regime: "echo", Warnings: []string{}}
	r.Meta.GitRef = "abc"
	r.Meta.Generator = "ceiling-load"
	r.Meta.FinishedAt = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	r.Meta.Calibration = &calibrate.Doc{
		Version: calibrate.Version, MeasuredAt: r.Meta.FinishedAt, Generator: "ceiling",
		GeneratorCPUs: []int{0}, SinkCPUs: []int{1}, SinkWrites: calibrate.WritesBatched, RecordSize: 256, DurationNs: 2e9, WarmupNs: 5e8,
		Caps: []calibrate.Cap{{Scenario: "echo", Batch: 10, PerCorePerS: 4e5, MeasuredPerS: 3.9e5, PerCPUSecond: 4e5,
			Connections: 64, Busy: 0.97, Saturated: true,
			Steps: []calibrate.Step{{Connections: 64, ThroughputPerS: 3.9e5, GeneratorCores: 0.97, SinkCores: 0.6}}}},
		Skipped: []calibrate.Skipped{{Scenario: "fanout", Reason: "no null sink"}},
	}
	r.Config = result.Config{Scenario: "echo", BatchLadder: []int{10}, HeadlineBatch: 10, Reps: 1, RecordSize: 256}
	r.Curve = []result.Point{{Index: 0, Role: result.RoleSweep, Batch: 10, Connections: 64, Status: result.StatusOK,
		ThroughputPerS: 3.5e5, Verdict: result.VerdictServerSaturated, Clean: true,
		NearCap: &result.NearCap{CapPerS: 4e5, PctOfCap: 87.5, WithinPct: calibrate.NearCapPct, Saturated: true}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	v, err := schema.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Validate(v); len(p) > 0 {
		t.Fatalf("schema problems: %v\n%s", p, b)
	}
	var back result.Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(r.Meta.Calibration, back.Meta.Calibration); d != "" {
		t.Errorf("meta.calibration after the round trip (-want +got):\n%s", d)
	}
	if d := cmp.Diff(r.Curve[0].NearCap, back.Curve[0].NearCap); d != "" {
		t.Errorf("near_generator_cap after the round trip (-want +got):\n%s", d)
	}

	bad := strings.Replace(string(b), `"msgs_per_s_per_core":400000`, `"msgs_per_s_per_core":"fast"`, 1)
	if bad == string(b) {
		t.Fatalf("the document has no msgs_per_s_per_core to break:\n%s", b)
	}
	v, _ = schema.Decode([]byte(bad))
	if p := s.Validate(v); len(p) != 1 || p[0].Path != "meta.calibration.caps[0].msgs_per_s_per_core" {
		t.Errorf("a broken cap: problems %v, want one at meta.calibration.caps[0].msgs_per_s_per_core", p)
	}
}

package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/calibrate"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/result"
)

func calibratedResult() *result.Result {
	r := &result.Result{Warnings: []string{}}
	r.Config = result.Config{Scenario: "echo", RecordSize: 256, BatchLadder: []int{10, 100, 512}}
	r.Meta.Pinning.GeneratorRequested = []int{0, 1} // 2 generator cores
	r.Meta.Calibration = &calibrate.Doc{Version: calibrate.Version, GeneratorCPUs: []int{0}, RecordSize: 256,
		Caps: []calibrate.Cap{
			{Scenario: "echo", Batch: 10, PerCorePerS: 100_000, Saturated: true},
			{Scenario: "echo", Batch: 100, PerCorePerS: 1_000_000, Saturated: true},
		}}
	pt := func(i, batch int, tput float64, status string) result.Point {
		return result.Point{Index: i, Role: result.RoleSweep, Batch: batch, Connections: 10, Status: status, ThroughputPerS: tput,
			Verdict: result.VerdictServerSaturated, VerdictReason: "server CPU at 98% of its cores"}
	}
	r.Curve = []result.Point{
		pt(0, 10, 175_000, result.StatusOK),    // 87.5% of 2 x 100k: within 15%, flagged
		pt(1, 10, 160_000, result.StatusOK),    // 80%: not
		pt(2, 100, 2_500_000, result.StatusOK), // above the cap: flagged
		pt(3, 100, 1_990_000, "failed"),        // near, but failed: not judged
		pt(4, 512, 9e9, result.StatusOK),       // no cap for batch 512
	}
	return r
}

// The flag: a point within NearCapPct of its batch's cap times the
// generator's cores gets near_generator_cap, a note on its verdict reason
// and one warning; its verdict stays. Summarize twice changes nothing.
func TestFlagNearCap(t *testing.T) {
	t.Parallel()
	r := calibratedResult()
	r.Summarize()
	first, _ := json.Marshal(r)
	r.Summarize()
	if again, _ := json.Marshal(r); string(again) != string(first) {
		t.Errorf("Summarize is not idempotent:\n%s\n%s", first, again)
	}
	flagged := map[int]bool{0: true, 2: true}
	for _, p := range r.Curve {
		if got := p.NearCap != nil; got != flagged[p.Index] {
			t.Errorf("point %d (batch %d, %.0f/s): flagged %v, want %v", p.Index, p.Batch, p.ThroughputPerS, got, flagged[p.Index])
		}
		if p.Verdict != result.VerdictServerSaturated {
			t.Errorf("point %d: verdict %q changed", p.Index, p.Verdict)
		}
		if has := strings.Contains(p.VerdictReason, result.NearCapMark); has != flagged[p.Index] {
			t.Errorf("point %d: verdict reason %q", p.Index, p.VerdictReason)
		}
	}
	if c := r.Curve[0].NearCap; c == nil || c.CapPerS != 200_000 || c.PctOfCap != 87.5 || c.WithinPct != calibrate.NearCapPct {
		t.Errorf("point 0: near_generator_cap %+v, want cap 200000 (2 cores x 100000), 87.5%%", c)
	}
	var warns []string
	for _, w := range r.Warnings {
		if strings.HasPrefix(w, result.NearCapMark) {
			warns = append(warns, w)
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "#0, #2") {
		t.Errorf("warnings %q, want one naming points #0, #2", r.Warnings)
	}
	if !slices.Contains(r.Warnings, "calibration: no cap for echo batch 512: those points are not flagged") {
		t.Errorf("warnings %q, want one saying batch 512 has no cap", r.Warnings)
	}
	tbl := new(strings.Builder)
	if err := result.WriteTable(tbl, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tbl.String(), result.NearCapMark) || !strings.Contains(tbl.String(), "88% of the generator's cap") {
		t.Errorf("the table does not say a point is near the cap:\n%s", tbl)
	}
}

// A calibration measured with another message size applies to nothing,
// and says so.
func TestFlagNearCapRecordSize(t *testing.T) {
	t.Parallel()
	r := calibratedResult()
	r.Config.RecordSize = 64
	r.Summarize()
	for _, p := range r.Curve {
		if p.NearCap != nil {
			t.Errorf("point %d flagged against a 256-byte calibration in a 64-byte sweep", p.Index)
		}
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "calibration: measured with 256-byte messages") {
		t.Errorf("no warning about the record size: %q", r.Warnings)
	}
}

func TestResolveCalibration(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"calibration_version": 1, "generator_cpus": [0], "sink_cpus": [1], "record_size": 256,
		"caps": [{"scenario": "echo", "batch": 10, "msgs_per_s_per_core": 5e5, "saturated": true}], "skipped": []}`)
	for _, tt := range []struct {
		name string
		o    knob.Options
		want string // "" : no error
	}{
		{"good", knob.Options{CalibrationFile: good}, ""},
		{"both", knob.Options{CalibrationFile: good, Calibrate: true}, "CALIBRATE (--calibrate) and CALIBRATION (--calibration)"},
		{"missing", knob.Options{CalibrationFile: filepath.Join(dir, "nope.json")}, "CALIBRATION (--calibration)"},
		{"bad batch", knob.Options{CalibrationFile: write("b.json", `{"calibration_version": 1, "generator_cpus": [0], "record_size": 256,
			"caps": [{"scenario": "echo", "batch": 0, "msgs_per_s_per_core": 5e5}]}`)}, "caps[0].batch"},
		{"bad rate", knob.Options{CalibrationFile: write("r.json", `{"calibration_version": 1, "generator_cpus": [0], "record_size": 256,
			"caps": [{"scenario": "echo", "batch": 1, "msgs_per_s_per_core": -1}]}`)}, "caps[0].msgs_per_s_per_core"},
		{"version", knob.Options{CalibrationFile: write("v.json", `{"calibration_version": 7}`)}, "calibration_version"},
		{"unknown field", knob.Options{CalibrationFile: write("u.json", `{"calibration_version": 1, "cap": []}`)}, `unknown field "cap"`},
	} {
		p := &draft{Options: tt.o}
		err := p.resolveCalibration()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want == "" && p.Calibration == nil:
			t.Errorf("%s: no document read", tt.name)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one naming %s", tt.name, err, tt.want)
		}
	}
}

//go:build e2e

package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/publish/schema"
	"github.com/ceiling-bench/ceiling/result"
)

// CALIBRATE=1: the sweep measures the generator against the null sink
// before its first point and records the document in meta.calibration,
// which the result schema accepts. Speed is not asserted; a machine too
// busy for a clean headline still records the calibration.
func TestSweepCalibrates(t *testing.T) {
	needProcs(t)
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {4}})
	o.Calibrate, o.Quick = true, true // quick: 1 s calibration steps
	var stdout, stderr bytes.Buffer
	_, err := harness.Run(context.Background(), plan(t, o, refTarget(t), nil), harness.RunConfig{
		Version: "test", Stdout: &stdout, Stderr: &stderr,
		Thresholds: verdict.DefaultThresholds, Getenv: func(string) string { return "" },
		Ceiling: filepath.Join(bin, "ceiling"),
	})
	t.Logf("stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
	if err != nil && !errors.Is(err, harness.ErrContended) && !errors.Is(err, harness.ErrNoCleanHeadline) {
		t.Fatalf("sweep: %v", err)
	}
	data, err := os.ReadFile(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	d := r.Meta.Calibration
	if d == nil || len(d.Caps) != 1 || d.Caps[0].Scenario != "echo" || d.Caps[0].Batch != 10 || !(d.Caps[0].PerCorePerS > 0) {
		t.Fatalf("meta.calibration %+v, want one positive cap for echo batch 10 (warnings %q)", d, r.Warnings)
	}
	s, err := schema.Compile(schema.Sweep)
	if err != nil {
		t.Fatal(err)
	}
	v, err := schema.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Validate(v); len(p) > 0 {
		t.Errorf("the result fails sweep.schema.json: %v", p)
	}
}

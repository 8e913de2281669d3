package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/calibrate"
	"github.com/ceiling-bench/ceiling/pinning"
)

// TestMain lets this test binary be `ceiling` for the processes a test
// starts (calibrate's generator and sink) when CEILING_TEST_AS_CEILING=1.
func TestMain(m *testing.M) {
	pinning.Init()
	if os.Getenv("CEILING_TEST_AS_CEILING") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// ceiling calibrate against the null sink on loopback, short steps: it
// finds a positive cap for echo, lists fanout as skipped with its reason,
// and writes a document that validates. Speed is not asserted.
func TestCalibrateAgainstSink(t *testing.T) {
	if !calibrate.Supported || !pinning.Supported {
		t.Skip("the null sink and pinning need Linux")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs: one for the generator, one for the sink")
	}
	t.Setenv("CEILING_TEST_AS_CEILING", "1")
	for _, v := range []string{"LT_CPUSET", "SRV_CPUSET", "GENERATOR", "BATCH_LADDER", "RECORD_SIZE", "SCENARIO"} {
		t.Setenv(v, "")
	}
	out := filepath.Join(t.TempDir(), "calibration.json")
	var stdout, stderr bytes.Buffer
	err := run([]string{"calibrate", "--scenario", "echo,fanout", "--batch-ladder", "10", "--conns", "2,8",
		"--duration", "400ms", "--warmup", "100ms", "--record-size", "64", "--out", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("calibrate: %v\n%s", err, stderr.String())
	}
	d, err := calibrate.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Caps) != 1 || d.Caps[0].Scenario != "echo" || d.Caps[0].Batch != 10 {
		t.Fatalf("caps %+v, want one for echo batch 10", d.Caps)
	}
	c := d.Caps[0]
	if !(c.PerCorePerS > 0) || len(c.Steps) == 0 || c.Steps[0].Connections != 2 || c.Steps[0].ThroughputPerS <= 0 {
		t.Errorf("cap %+v: want a positive cap from steps starting at 2 connections", c)
	}
	for _, s := range c.Steps {
		if s.Error != "" || s.Errors > 0 {
			t.Errorf("step %+v had errors", s)
		}
	}
	if len(d.Skipped) != 1 || d.Skipped[0].Scenario != "fanout" || d.Skipped[0].Reason == "" {
		t.Errorf("skipped %+v, want fanout with its reason", d.Skipped)
	}
	if d.RecordSize != 64 || len(d.GeneratorCPUs) != 1 || len(d.SinkCPUs) == 0 {
		t.Errorf("doc %+v: record size 64, one generator CPU, sink CPUs", d)
	}
	if !strings.Contains(stdout.String(), "msg/s per generator core") || !strings.Contains(stdout.String(), "fanout: not calibrated") {
		t.Errorf("table:\n%s", stdout.String())
	}
	var raw map[string]any
	b, _ := os.ReadFile(out)
	if err := json.Unmarshal(b, &raw); err != nil || raw["calibration_version"] == nil {
		t.Errorf("document: %v\n%s", err, b)
	}
}

// Bad input is exit 2 before anything starts, naming the flag.
func TestCalibrateBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--conns", "8,2"}, "--conns"},
		{[]string{"--record-size", "0"}, "--record-size"},
		{[]string{"--duration", "0s"}, "--duration"},
		{[]string{"--batch-ladder", "x"}, "batch-ladder"},
		{[]string{"--scenario", ""}, "--scenario"},
		{[]string{"--lt-cpuset", "0", "--srv-cpuset", "0"}, "overlap"},
		{[]string{"--sink-writes", "lots"}, "--sink-writes"},
		{[]string{"--lt-cpuset", "999"}, "lt-cpuset"},
		{[]string{"--nope"}, "nope"},
		{[]string{"stray"}, "stray"},
	} {
		err := run(append([]string{"calibrate"}, tt.args...), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("calibrate %q: %v (exit %d), want exit 2 naming %s", tt.args, err, exitCode(err), tt.want)
		}
	}
}

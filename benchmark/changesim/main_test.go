package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

var update = flag.Bool("update", false, "rewrite testdata/report.golden.md")

// recordings are the A/A documents comparesim's validation recorded;
// changesim reads the same ones.
var recordings = []string{
	"../comparesim/testdata/aa-quiet.json",
	"../comparesim/testdata/aa-drift.json",
	"../comparesim/testdata/aa-5s-calm.json",
}

func defaultOptions() options {
	return options{seeds: 50, k: 3, stat: statMax, floor: floorAA}
}

// aaRecordings are the recordings the A/A test draws its histories
// from, with the seeds of 20 each may give a change point: none, as
// issue 34 asks, on all but aa-1s-1205, whose runs fall in two groups
// 1.4× apart (the VM changed speed while it was recorded: its drift was
// 1.49, docs/compare.md), so that a history of independent draws from it
// has runs of 3 or 4 entries from the high group beyond even their own
// floors (seed 15: +17.6% over its first 4 entries, p = 2e-5);
// docs/report.md says so.
var aaRecordings = []struct {
	path    string
	allowed int
}{
	{"../comparesim/testdata/aa-quiet.json", 0},
	{"../comparesim/testdata/aa-drift.json", 0},
	{"../comparesim/testdata/aa-5s-calm.json", 0},
	{"../comparesim/testdata/aa-5s-1205.json", 0},
	{"../comparesim/testdata/aa-1s-1205.json", 1},
}

// On A/A histories resampled from each recording, with the command's
// defaults, `ceiling history --changes` finds no change point in 20 of
// 20 seeds (but on aa-1s-1205, at most one). Before each side's own
// floors were asked (2026-12-05), seed 18 of aa-quiet and seed 13 of
// aa-drift gave one: a run of 3 to 6 high draws, each one that its own
// repeat disowned. Every change point found is logged.
func TestAAHistoriesHaveNoChangePoint(t *testing.T) {
	o := defaultOptions()
	for _, r := range aaRecordings {
		rec, err := loadRecording(r.path)
		if err != nil {
			t.Fatal(err)
		}
		var seeds []int
		for seed := range 20 {
			h, _ := history(rec, scenarios[0], seed, o)
			cs := publish.Changes(h)
			for _, c := range cs {
				t.Logf("%s seed %d: a change point between %s and %s: %+.2f%% (%.0f over %d entries, %.0f over %d), p = %.2g, least change %.2f%%",
					rec.name, seed, c.Before.GitRef, c.After.GitRef, c.ChangePct, c.MeanBefore, c.NBefore, c.MeanAfter, c.NAfter, c.P, c.MinChangePct)
			}
			if len(cs) > 0 {
				seeds = append(seeds, seed)
			}
		}
		if len(seeds) > r.allowed {
			t.Errorf("%s: change points on A/A histories at seeds %v, more than %d of 20", rec.name, seeds, r.allowed)
		}
	}
}

// The report's layout on the recordings with a few seeds; rewrite with
// go test ./benchmark/changesim -run Golden -update.
func TestGoldenReport(t *testing.T) {
	args := append([]string{"-seeds", "4"}, recordings...)
	var stdout, stderr bytes.Buffer
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := run(args, &again, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	if again.String() != stdout.String() {
		t.Error("two runs with the same flags printed different reports")
	}
	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := stdout.String(); got != string(want) {
		t.Errorf("report differs from %s (rerun with -update to accept):\n%s", golden, got)
	}
}

// A recording's histories do not depend on the other files given, nor
// on their order: its seeds are named by its file.
func TestHistoriesIndependentOfOtherFiles(t *testing.T) {
	o := defaultOptions()
	o.seeds = 2
	var recs []recording
	for _, p := range recordings {
		rec, err := loadRecording(p)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	all := simulate(recs, o)
	alone := simulate(recs[2:], o)
	for si := range scenarios {
		for ri := range rules {
			a, b := all.tally[2][si][ri], alone.tally[0][si][ri]
			if a.found != b.found || a.detections != b.detections || a.matched != b.matched {
				t.Errorf("%s, %s, %s: %+v with the other files, %+v alone", recs[2].name, scenarios[si].name, rules[ri].name, a, b)
			}
		}
	}
}

func TestBadFlagExits2(t *testing.T) {
	doc := recordings[0]
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"-seeds", "many", doc}, "-seeds"},
		{[]string{"-seeds", "0", doc}, "-seeds"},
		{[]string{"-k", "0", doc}, "-k"},
		{[]string{"-stat", "median", doc}, "-stat"},
		{[]string{"-floor", "recorded", doc}, "-floor"},
		{[]string{"-bogus", doc}, "-bogus"},
		{[]string{}, "FILE"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(tc.args, &stdout, &stderr)
		if err == nil {
			t.Errorf("%q: no error", tc.args)
			continue
		}
		if !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%q: error %q does not name %s", tc.args, err, tc.flag)
		}
		if c := exitCode(err); c != 2 {
			t.Errorf("%q: exit %d, want 2 (%v)", tc.args, c, err)
		}
		if stdout.Len() > 0 {
			t.Errorf("%q: wrote a report: %s", tc.args, stdout.String())
		}
	}
	if err := run([]string{"-h"}, new(bytes.Buffer), new(bytes.Buffer)); exitCode(err) != 0 {
		t.Errorf("-h: exit %d (%v), want 0", exitCode(err), err)
	}
}

// writeDoc writes r as a document in dir and returns its path.
func writeDoc(t *testing.T, dir, name string, r result.Result) string {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// twoArm is an A/A document whose compared point (batch 10, 64
// connections) ran n clean repeats and one contended one.
func twoArm(n int) result.Result {
	r := result.Result{SchemaVersion: result.SchemaVersion, Regime: "synthetic A/A",
		Comparison: &result.Comparison{Headline: result.ComparedPoint{Batch: 10, Connections: 64}}}
	add := func(arm string, x float64, clean bool) {
		r.Curve = append(r.Curve, result.Point{Index: len(r.Curve) + 1, Role: result.RoleCompare, Arm: arm,
			Batch: 10, Connections: 64, Status: result.StatusOK, ThroughputPerS: x, Clean: clean})
	}
	for i := range n {
		add([]string{result.ArmBase, result.ArmHead}[i%2], 1000+float64(i), true)
	}
	add(result.ArmHead, 10, false) // contended: left out
	r.Curve = append(r.Curve, result.Point{Role: result.RoleCompare, Arm: result.ArmBase, Batch: 100, Connections: 64,
		Status: result.StatusOK, ThroughputPerS: 5, Clean: true}) // another point: left out
	return r
}

func TestLoadKeepsCleanRunsOfTheComparedPoint(t *testing.T) {
	rec, err := loadRecording(writeDoc(t, t.TempDir(), "aa.json", twoArm(12)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.runs) != 12 || rec.runs[0] != 1000 || rec.runs[11] != 1011 || rec.name != "aa.json" || rec.batch != 10 || rec.conns != 64 {
		t.Errorf("loaded %+v, want the 12 clean runs of batch 10, 64 connections, both arms", rec)
	}
}

func TestBadFileNamesIt(t *testing.T) {
	dir := t.TempDir()
	single := twoArm(12)
	single.Comparison = nil
	few := writeDoc(t, dir, "few.json", twoArm(minRuns-1))
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte(`{"curve": 3`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{writeDoc(t, dir, "single.json", single), few, garbage, filepath.Join(dir, "missing.json")} {
		err := run([]string{recordings[0], bad}, new(bytes.Buffer), new(bytes.Buffer))
		if err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: error %v does not name the file", bad, err)
		}
		if exitCode(err) != 1 {
			t.Errorf("%s: exit %d, want 1", bad, exitCode(err))
		}
	}
}

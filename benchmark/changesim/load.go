package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/ceiling-bench/ceiling/internal/stats"
	"github.com/ceiling-bench/ceiling/result"
)

// minRuns is the fewest clean runs a recording must hold: resampling
// fewer would draw the same handful of values over and over, and the
// histories would show the recording's accidents, not its noise.
const minRuns = 10

// recording is one A/A document's clean runs at its compared point, both
// arms pooled: under A/A, base and head are the same server, so which
// arm a run belongs to says nothing about its throughput.
type recording struct {
	name         string // the file's base name: the report and the seeds use it, so neither depends on the directory
	regime       string
	batch, conns int
	runs         []float64 // throughputs, in the order they ran
	spreadPct    float64   // stats.RelSpreadPct of runs: MAD/median
}

// loadRecording reads an A/A two-arm document (ceiling sweep
// --base-target, base and head the same server). Every error names the
// file.
func loadRecording(path string) (recording, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return recording{}, err // *PathError names the file
	}
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return recording{}, fmt.Errorf("%s: not a sweep document (result.Result JSON): %w", path, err)
	}
	if r.Comparison == nil {
		return recording{}, fmt.Errorf("%s: not a two-arm document (no comparison); record one with ceiling sweep --base-target", path)
	}
	h := r.Comparison.Headline
	rec := recording{name: filepath.Base(path), regime: r.Regime, batch: h.Batch, conns: h.Connections}
	rec.runs = cleanRuns(r.Curve, h.Batch, h.Connections)
	if len(rec.runs) < minRuns {
		return recording{}, fmt.Errorf("%s: %d clean runs at its compared point (batch %d, %d connections), fewer than %d: too few to resample",
			path, len(rec.runs), h.Batch, h.Connections, minRuns)
	}
	rec.spreadPct = stats.RelSpreadPct(rec.runs)
	return rec, nil
}

// cleanRuns is the throughput of every clean compare repeat at (batch,
// conns), either arm, in run order. Only clean runs: a published
// headline is a clean point (result.Result.Summarize takes no other), so
// a contended run's dip is noise no history entry could show.
func cleanRuns(curve []result.Point, batch, conns int) []float64 {
	var out []float64
	for _, p := range curve {
		if p.Role != result.RoleCompare || p.Batch != batch || p.Connections != conns {
			continue
		}
		if p.Status == result.StatusOK && p.Clean && p.ThroughputPerS > 0 && !math.IsInf(p.ThroughputPerS, 1) {
			out = append(out, p.ThroughputPerS)
		}
	}
	return out
}

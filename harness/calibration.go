package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/calibrate"
)

// NearCap is a point whose throughput came within calibrate.NearCapPct of
// the generator's calibrated cap for its batch, scaled by the generator's
// cores (Point.NearCap).
type NearCap struct {
	CapPerS   float64 `json:"cap_per_s"`  // the cap per core x the generator's cores
	PctOfCap  float64 `json:"pct_of_cap"` // the point's throughput, in percent of it
	WithinPct float64 `json:"within_pct"` // the margin that flags: calibrate.NearCapPct
	Saturated bool    `json:"calibration_saturated"`
}

// nearCapMark opens what flagNearCap adds to a verdict reason and to the
// warnings.
const nearCapMark = "near the generator's calibrated cap"

// resolveCalibration reads CALIBRATION and refuses it with CALIBRATE.
func (o *Options) resolveCalibration() error {
	if o.CalibrationFile == "" {
		return nil
	}
	if o.Calibrate {
		return fmt.Errorf("CALIBRATE (--calibrate) and CALIBRATION (--calibration): set one: measure now, or read %s", o.CalibrationFile)
	}
	d, err := calibrate.ReadFile(o.CalibrationFile)
	if err != nil {
		return fmt.Errorf("CALIBRATION (--calibration): %w", err)
	}
	o.Calibration = d
	return nil
}

// Calibration step lengths: a step only needs the generator's busy
// fraction and throughput, not latency percentiles.
const (
	CalibrateDuration      = 2 * time.Second
	CalibrateWarmup        = 500 * time.Millisecond
	QuickCalibrateDuration = time.Second
	QuickCalibrateWarmup   = 300 * time.Millisecond
)

// CalibrationConfig is the calibration of o's generator: its command
// (GENERATOR, or this binary's `load`) pinned to LT_CPUSET, the null sink
// (`calibrate --serve-sink` of the ceiling binary self; empty: this
// executable) to SRV_CPUSET, o's scenario, batch ladder and record size.
func CalibrationConfig(o *Options, self string) (calibrate.Config, error) {
	if self == "" {
		exe, err := os.Executable()
		if err != nil {
			return calibrate.Config{}, fmt.Errorf("find this executable for the sink: %w", err)
		}
		self = exe
	}
	gen := strings.Fields(o.Generator)
	if len(gen) == 0 {
		gen = []string{self, "load"}
	}
	c := calibrate.Config{
		Generator: gen, GeneratorCPUs: o.GeneratorCPUs, SinkCPUs: o.ServerCPUs,
		Sink: []string{self, "calibrate", "--serve-sink"}, SinkWrites: calibrate.WritesBatched,
		Scenarios: []string{o.Scenario}, Batches: append([]int(nil), o.BatchLadder...),
		Conns: append([]int(nil), calibrate.DefaultConns...), RecordSize: o.RecordSize,
		Duration: CalibrateDuration, Warmup: CalibrateWarmup, WorkDir: o.WorkDir,
	}
	if o.Quick {
		c.Duration, c.Warmup = QuickCalibrateDuration, QuickCalibrateWarmup
	}
	return c, nil
}

// flagNearCap marks every ok point whose throughput is within
// calibrate.NearCapPct of its batch's calibrated cap (times the
// generator's cores): Point.NearCap, a note on its verdict reason and one
// warning. The verdict itself stays: being near the cap says the point may
// measure the generator, the verdict's evidence says whether it did.
// Idempotent, like Summarize.
func (r *Result) flagNearCap() {
	d := r.Meta.Calibration
	cores := len(r.Meta.Pinning.GeneratorGranted)
	if cores == 0 {
		cores = len(r.Meta.Pinning.GeneratorRequested)
	}
	usable := d != nil && d.RecordSize == r.Config.RecordSize
	if d != nil && !usable {
		r.warn(fmt.Sprintf("calibration: measured with %d-byte messages, the sweep sent %d: its caps do not apply and no point is flagged", d.RecordSize, r.Config.RecordSize))
	}
	if usable {
		var missing []string
		for _, b := range r.Config.BatchLadder {
			if _, ok := d.CapFor(r.Config.Scenario, b); !ok {
				missing = append(missing, strconv.Itoa(b))
			}
		}
		switch {
		case len(missing) == len(r.Config.BatchLadder) && len(missing) > 0:
			why := calibrate.SkipReason(r.Config.Scenario)
			if why == "" {
				why = "it was measured at other batch sizes"
			}
			r.warn(fmt.Sprintf("calibration: no cap for %s (%s): no point is flagged", r.Config.Scenario, why))
		case len(missing) > 0:
			r.warn(fmt.Sprintf("calibration: no cap for %s batch %s: those points are not flagged", r.Config.Scenario, strings.Join(missing, ", ")))
		}
	}
	var flagged []string
	for i := range r.Curve {
		p := &r.Curve[i]
		p.NearCap = nil
		if j := strings.Index(p.VerdictReason, nearCapMark); j >= 0 {
			p.VerdictReason = strings.TrimSuffix(strings.TrimRight(p.VerdictReason[:j], " "), ";")
		}
		if !usable || p.Status != StatusOK {
			continue
		}
		c, ok := d.CapFor(r.Config.Scenario, p.Batch)
		if !ok {
			continue
		}
		near, limit := calibrate.NearCap(c, cores, p.ThroughputPerS, calibrate.NearCapPct)
		if !near {
			continue
		}
		p.NearCap = &NearCap{CapPerS: limit, PctOfCap: p.ThroughputPerS / limit * 100, WithinPct: calibrate.NearCapPct, Saturated: c.Saturated}
		note := fmt.Sprintf("%s (%.0f%% of %.0f msg/s for batch %d on %s)", nearCapMark, p.NearCap.PctOfCap, limit, p.Batch, plural(max(cores, 1), "generator core"))
		if p.VerdictReason != "" {
			note = "; " + note
		}
		p.VerdictReason += note
		flagged = append(flagged, fmt.Sprintf("#%d", p.Index))
	}
	if len(flagged) > 0 {
		r.warn(fmt.Sprintf("%s: points %s reached within %.0f%% of what the generator drives against a null sink (meta.calibration): they may measure the generator; give it more cores (LT_CPUSET)",
			nearCapMark, strings.Join(flagged, ", "), calibrate.NearCapPct))
	}
}

// runCalibration is CALIBRATE=1: the calibration before the first point,
// with the sweep's CPU sets (no server is up yet, so the sink has the
// server's CPUs to itself). A failure is a warning, never the sweep's end.
func runCalibration(ctx context.Context, o *Options, self string, stderr io.Writer, r *Result) *calibrate.Doc {
	cfg, err := CalibrationConfig(o, self)
	if err == nil {
		cfg.Log = stderr
		fmt.Fprintf(stderr, "ceiling sweep: calibrating the generator on CPUs %s against a null sink on %s\n", o.GeneratorCPUs, o.ServerCPUs)
		var d *calibrate.Doc
		if d, err = calibrate.Run(ctx, cfg); err == nil {
			return d
		}
	}
	r.warn(fmt.Sprintf("CALIBRATE=1 failed, no point is flagged: %v", err))
	return nil
}

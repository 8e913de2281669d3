package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/calibrate"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/result"
)

// resolveCalibration reads CALIBRATION and refuses it with CALIBRATE.
func (o *draft) resolveCalibration() error {
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
func CalibrationConfig(o *knob.Options, self string) (calibrate.Config, error) {
	g := o.Groups()
	return calibrationConfig(g.CPUs, g.Schedule, g.Point, self)
}

// calibrationConfig is CalibrationConfig of a plan's knobs.
func calibrationConfig(cpus knob.CPUs, s knob.Schedule, pt knob.Point, self string) (calibrate.Config, error) {
	if self == "" {
		exe, err := os.Executable()
		if err != nil {
			return calibrate.Config{}, fmt.Errorf("find this executable for the sink: %w", err)
		}
		self = exe
	}
	gen := strings.Fields(pt.Generator)
	if len(gen) == 0 {
		gen = []string{self, "load"}
	}
	c := calibrate.Config{
		Generator: gen, GeneratorCPUs: cpus.Generator, SinkCPUs: cpus.Server,
		Sink: []string{self, "calibrate", "--serve-sink"}, SinkWrites: calibrate.WritesBatched,
		Scenarios: []string{pt.Scenario}, Batches: append([]int(nil), s.BatchLadder...),
		Conns: append([]int(nil), calibrate.DefaultConns...), RecordSize: pt.RecordSize,
		Duration: CalibrateDuration, Warmup: CalibrateWarmup, WorkDir: pt.WorkDir,
	}
	if s.Quick {
		c.Duration, c.Warmup = QuickCalibrateDuration, QuickCalibrateWarmup
	}
	return c, nil
}

// runCalibration is CALIBRATE=1: the calibration before the first point,
// with the sweep's CPU sets (no server is up yet, so the sink has the
// server's CPUs to itself). A failure is a warning, never the sweep's end.
func runCalibration(ctx context.Context, p *Plan, self string, stderr io.Writer, r *result.Result) *calibrate.Doc {
	o := p.CPUs
	cfg, err := calibrationConfig(o, p.Schedule, p.Point, self)
	if err == nil {
		cfg.Log = stderr
		fmt.Fprintf(stderr, "ceiling sweep: calibrating the generator on CPUs %s against a null sink on %s\n", o.Generator, o.Server)
		var d *calibrate.Doc
		if d, err = calibrate.Run(ctx, cfg); err == nil {
			return d
		}
	}
	r.Warn(fmt.Sprintf("CALIBRATE=1 failed, no point is flagged: %v", err))
	return nil
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/calibrate"
	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/outfile"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/pinning"
)

const calibrateUsage = `usage: ceiling calibrate [flags]

Measure the generator's own cap: messages per second per generator core
against a null sink that costs the server side nothing, per scenario and
batch size, ramping connections until the generator's core is saturated.
Writes a JSON document (--out) that ceiling sweep records with
CALIBRATION=FILE, and prints a table. The CPU sets, generator, batch ladder,
record size and scenario default to the sweep's variables (LT_CPUSET,
SRV_CPUSET, GENERATOR, BATCH_LADDER, RECORD_SIZE, SCENARIO). See
docs/sweep.md, "Calibration".

flags:
`

// calibrateKnobs are the sweep's knobs calibrate takes, as flags and
// variables (SCENARIO is its own: a list).
var calibrateKnobs = []string{"LT_CPUSET", "SRV_CPUSET", "GENERATOR", "BATCH_LADDER", "RECORD_SIZE"}

// runCalibrate is `ceiling calibrate`; with --serve-sink it is the null
// sink process the calibration starts.
func runCalibrate(args []string, stdout, stderr io.Writer) error {
	o := knob.DefaultOptions(false)
	if err := o.ApplyEnv(os.LookupEnv, os.Environ()); err != nil {
		return usageError{err}
	}
	f, err := parseCalibrateFlags(args, &o, stderr)
	if f == nil || err != nil {
		return err // nil after --help
	}
	ctx, stop := supervise.OnSignal(context.Background(), time.Second)
	defer stop()
	if f.serveSink {
		if o.RecordSize < 1 || o.RecordSize > 1<<20 {
			return usagef("--record-size: %d is not in 1..1048576", o.RecordSize)
		}
		return calibrate.SinkMain(ctx, stdout, o.RecordSize, runtime.GOMAXPROCS(0), f.sinkWrites)
	}
	if !calibrate.Supported {
		return usagef("ceiling calibrate: the null sink needs Linux")
	}
	cfg, err := calibrateConfig(&o, f, stderr)
	if err != nil {
		return err
	}
	if f.out != "-" {
		if err := outfile.Check(f.out); err != nil {
			return usageError{fmt.Errorf("--out: %w", err)}
		}
	}
	dir, err := os.MkdirTemp("", "ceiling-calibrate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg.WorkDir = dir
	d, err := calibrate.Run(ctx, cfg)
	if err != nil {
		return err
	}
	return writeCalibration(d, f.out, stdout, stderr)
}

// calibrateFlags are calibrate's own flags, apart from the sweep's knobs
// it sets in the options.
type calibrateFlags struct {
	scenarios, conns, out, sinkWrites string
	dur, warm                         time.Duration
	serveSink                         bool
}

// parseCalibrateFlags parses args into o (the sweep's knobs) and the
// flags it returns. Both results are nil after --help.
func parseCalibrateFlags(args []string, o *knob.Options, stderr io.Writer) (*calibrateFlags, error) {
	fs := flag.NewFlagSet("ceiling calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, calibrateUsage); printFlags(fs, stderr) }
	// The sweep's own knobs, from its table (the null sink stands on the
	// server's CPUs): the same flags, variables, help and checks.
	for _, env := range calibrateKnobs {
		k, ok := knob.KnobByEnv(env)
		if !ok {
			return nil, fmt.Errorf("ceiling calibrate: no knob %s in the table", env)
		}
		fs.Var(knob.KnobValue{K: k, O: o}, k.Flag, k.FlagUsage())
	}
	scenarios := fs.String("scenario", o.Scenario, "scenarios, comma separated (SCENARIO); those without a null sink are listed as skipped")
	conns := fs.String("conns", knob.Ladder(calibrate.DefaultConns).String(), "the connection ramp, ascending")
	dur := fs.Duration("duration", harness.CalibrateDuration, "measured window of each step")
	warm := fs.Duration("warmup", harness.CalibrateWarmup, "warm-up of each step")
	out := fs.String("out", "calibration.json", "write the JSON document here (- : stdout, and no table)")
	sinkWrites := fs.String("sink-writes", calibrate.WritesBatched, "how the null sink writes its replies: batched (one write per read: the server side costs least) | per-message (one write per reply, as most servers write)")
	serveSink := fs.Bool("serve-sink", false, "internal: be the null sink process (prints ready ADDR)")
	if done, err := parseFlags(fs, args); done {
		return nil, err // nil, nil: -h, its usage printed
	}
	if fs.NArg() > 0 {
		return nil, usagef("ceiling calibrate: unexpected argument %q", fs.Arg(0))
	}
	return &calibrateFlags{
		scenarios: *scenarios, conns: *conns, out: *out, sinkWrites: *sinkWrites,
		dur: *dur, warm: *warm, serveSink: *serveSink,
	}, nil
}

// calibrateConfig checks the ramp and the CPU sets against this
// process's affinity and builds the calibration's configuration.
func calibrateConfig(o *knob.Options, f *calibrateFlags, stderr io.Writer) (calibrate.Config, error) {
	ramp, err := knob.ParseLadder("--conns", f.conns)
	if err != nil {
		return calibrate.Config{}, usageError{err}
	}
	if err := checkCalibrateCPUs(o); err != nil {
		return calibrate.Config{}, err
	}
	cfg, err := harness.CalibrationConfig(o, "")
	if err != nil {
		return calibrate.Config{}, err
	}
	cfg.Scenarios = splitList(f.scenarios)
	cfg.Conns = ramp
	cfg.Duration, cfg.Warmup = f.dur, f.warm
	cfg.SinkWrites = f.sinkWrites
	cfg.Log = stderr
	if err := cfg.Validate(); err != nil {
		return calibrate.Config{}, usageError{err}
	}
	return cfg, nil
}

// checkCalibrateCPUs resolves the CPU sets and refuses a CPU this
// process may not run on.
func checkCalibrateCPUs(o *knob.Options) error {
	available, err := pinning.Granted(os.Getpid())
	if err != nil && !errors.Is(err, pinning.ErrUnsupported) {
		return fmt.Errorf("read this process's CPU affinity: %w", err)
	}
	if _, err := harness.ResolveCPUs(o, available); err != nil {
		return usageError{err}
	}
	for _, side := range []struct {
		flag string
		set  pinning.CPUSet
	}{{"--lt-cpuset", o.GeneratorCPUs}, {"--srv-cpuset", o.ServerCPUs}} {
		for _, c := range side.set {
			if len(available) > 0 && !available.Contains(c) {
				return usagef("%s: CPU %d is not one this process may run on (%s)", side.flag, c, available)
			}
		}
	}
	return nil
}

// writeCalibration writes the document to out (- : stdout, and no
// table), prints the table, and returns the calibration's status.
func writeCalibration(d *calibrate.Doc, out string, stdout, stderr io.Writer) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if out == "-" {
		if _, err := stdout.Write(b); err != nil {
			return err
		}
		return calibrateStatus(d)
	}
	if err := outfile.WriteFile(out, b); err != nil {
		return err
	}
	if err := calibrate.WriteTable(stdout, d); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "ceiling calibrate: written to %s (ceiling sweep: CALIBRATION=%s)\n", out, out)
	return calibrateStatus(d)
}

// calibrateStatus is exit 1 when batches were asked for and none could be
// measured (the document is written all the same).
func calibrateStatus(d *calibrate.Doc) error {
	if len(d.Caps) == 0 && len(d.Failed) > 0 {
		return exitStatus{1, fmt.Errorf("no batch could be measured: %s batch %d: %s", d.Failed[0].Scenario, d.Failed[0].Batch, d.Failed[0].Reason)}
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		out = append(out, f)
	}
	return out
}

package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
)

// RunConfig is what Run needs beyond the knobs.
type RunConfig struct {
	Target     TargetSpec // loaded and overridden by the caller
	Version    string
	Getenv     func(string) string
	Stdout     io.Writer // the table
	Stderr     io.Writer // progress, warnings
	Thresholds Thresholds

	// BaseTarget makes a two-arm sweep (SweepTwoArm): the base arm's
	// server, Target the head's. Nil: a single-arm sweep.
	BaseTarget *TargetSpec
}

// Run is `ceiling sweep` after its knobs are valid: it sweeps with the real
// processes (ProcRunner), writes the result to o.Out (always, also when
// interrupted or without a clean headline) and prints the table. Its error
// is ErrInterrupted, ErrNoCleanHeadline, or a failure to write.
func Run(ctx context.Context, o *Options, rc RunConfig) (*Result, error) {
	if rc.Getenv == nil {
		rc.Getenv = os.Getenv
	}
	for _, n := range o.Notes {
		fmt.Fprintf(rc.Stderr, "ceiling sweep: %s\n", n)
	}
	if o.WorkDir == "" {
		d, err := os.MkdirTemp("", "ceiling-sweep-")
		if err != nil {
			return nil, fmt.Errorf("work dir: %w", err)
		}
		o.WorkDir = d
	}
	fmt.Fprintf(rc.Stderr, "ceiling sweep: server on CPUs %s, generator on CPUs %s; logs in %s\n", o.ServerCPUs, o.GeneratorCPUs, o.WorkDir)

	r := &Result{Warnings: []string{}}
	// Taken once before the first point; the result is written outside
	// the tree, so the run itself cannot make the ref dirty.
	r.Meta.Meta = load.CollectMeta(load.Options{Command: o.Command, Version: rc.Version})
	r.Meta.Runner = runnerFromEnv(rc.Getenv)
	r.Meta.Generator = generatorName(o.Generator)
	r.Meta.Target = Target{Name: rc.Target.Name, File: rc.Target.File, Command: redact(rc.Target.Command, rc.Target)}
	r.Meta.Target.URL, _ = rc.Target.URLFor(o.Scenario)
	r.Meta.Pinning = pinningOf(o)
	for _, w := range pinningWarnings(o) {
		r.warn(w)
	}
	for _, w := range rc.Target.Warnings(o.Scenario) {
		r.warn(w)
	}

	runner, err := NewProcRunner(o, rc.Target)
	if err != nil {
		return nil, err
	}
	var sweepErr error
	if b := rc.BaseTarget; b != nil {
		r.Meta.BaseTarget = &Target{Name: b.Name, File: b.File, Command: redact(b.Command, *b)}
		r.Meta.BaseTarget.URL, _ = b.URLFor(o.Scenario)
		runner.SetBase(*b)
		sweepErr = SweepTwoArm(ctx, o, runner, r, rc.Stderr, rc.Thresholds)
	} else {
		sweepErr = Sweep(ctx, o, runner, r, rc.Stderr, rc.Thresholds)
	}
	runner.RecordGranted(r)
	r.Meta.FinishedAt = time.Now().UTC()
	r.Summarize()

	if err := WriteResult(o.Out, r); err != nil {
		return r, errors.Join(sweepErr, err)
	}
	if err := WriteTable(rc.Stdout, r); err != nil {
		return r, errors.Join(sweepErr, err)
	}
	fmt.Fprintf(rc.Stderr, "ceiling sweep: result written to %s\n", o.Out)
	return r, sweepErr
}

// generatorName is the result's meta.generator: "ceiling-load" for our
// own, else the GENERATOR command's base name.
func generatorName(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return "ceiling-load"
	}
	n := regexp.MustCompile(`[^A-Za-z0-9._-]`).ReplaceAllString(filepath.Base(f[0]), "-")
	n = strings.TrimLeft(n, ".-_")
	if n == "" {
		n = "generator"
	}
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

func pinningOf(o *Options) Pinning {
	p := Pinning{
		Supported:          pinning.Supported,
		ServerRequested:    o.ServerCPUs.Ints(),
		GeneratorRequested: o.GeneratorCPUs.Ints(),
		ServerGranted:      []int{},
		GeneratorGranted:   []int{},
		OverlapAllowed:     o.AllowOverlap,
		SMTSiblings:        [][2]int{},
		NoFileLimit:        NoFileLimit,
	}
	if pairs, err := pinning.SMTSiblings(o.ServerCPUs, o.GeneratorCPUs); err == nil && pairs != nil {
		p.SMTSiblings = pairs
	}
	return p
}

func pinningWarnings(o *Options) []string {
	var w []string
	if !pinning.Supported {
		w = append(w, "CPU pinning is unsupported on this system: server and generator ran unpinned")
	}
	if shared := pinning.Overlap(o.ServerCPUs, o.GeneratorCPUs); len(shared) > 0 {
		w = append(w, fmt.Sprintf("server and generator share CPUs %s (overlap allowed): the generator steals server CPU and the numbers are not a clean ceiling", shared))
	}
	if pairs, err := pinning.SMTSiblings(o.ServerCPUs, o.GeneratorCPUs); err == nil && len(pairs) > 0 {
		w = append(w, fmt.Sprintf("server and generator CPUs are SMT siblings of one physical core %v: they compete for its execution units", pairs))
	}
	return w
}

// redact hides the fan-out secret wherever the server's command line
// carries it: a result is published, a secret must not be.
func redact(argv []string, t TargetSpec) []string {
	out := append([]string(nil), argv...)
	if t.Fanout == nil || t.Fanout.Secret == "" {
		return out
	}
	for i, a := range out {
		out[i] = strings.ReplaceAll(a, t.Fanout.Secret, "REDACTED")
	}
	return out
}

package main

import (
	"flag"
	"fmt"

	"github.com/ceiling-bench/ceiling/harness"
)

// compareFlags binds the two-arm sweep's knobs (docs/compare.md).
func compareFlags(fs *flag.FlagSet, o *harness.Options) {
	fs.StringVar(&o.BaseTargetFile, "base-target", o.BaseTargetFile, "target `FILE` of the base arm: sweep base and head (--target) in one run and compare them (BASE_TARGET)")
	fs.IntVar(&o.CompareReps, "compare-reps", o.CompareReps, "repeats per arm at each compared point, at least 2 (COMPARE_REPS)")
	fs.Float64Var(&o.Alpha, "alpha", o.Alpha, "significance level of the comparison, in (0, 1) (ALPHA)")
	fs.Var(durationFlag{&o.CompareDuration}, "compare-duration", "measured window of each compare repeat (COMPARE_DURATION)")
	fs.Var(durationFlag{&o.CompareWarmup}, "compare-warmup", "warm-up of each compare repeat (COMPARE_WARMUP)")
}

// loadBaseTarget reads the base arm's target file. The flag overrides of
// the target (--server-cmd, --url, --ready) are the head's alone.
func loadBaseTarget(o *harness.Options) (harness.TargetSpec, error) {
	t, err := harness.LoadTarget(o.BaseTargetFile)
	if err != nil {
		return t, fmt.Errorf("BASE_TARGET (--base-target): %w", err)
	}
	if err := t.CheckRunnable(o.Scenario); err != nil {
		return t, fmt.Errorf("BASE_TARGET %s: %w", o.BaseTargetFile, err)
	}
	return t, nil
}

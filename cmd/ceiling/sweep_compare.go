package main

import (
	"fmt"

	"github.com/ceiling-bench/ceiling/harness"
)

// loadBaseTarget reads the base arm's target file. The flag overrides of
// the target (--server-cmd, --url, --ready) are the head's alone.
func loadBaseTarget(o *harness.Options) (harness.TargetSpec, error) {
	t, err := harness.LoadTarget(o.BaseTargetFile)
	if err != nil {
		return t, fmt.Errorf("BASE_TARGET (--base-target): %w", err)
	}
	// SCENARIO_FILE is the sweep's, so both arms run the same file; the
	// ladder is the head's (already set).
	if err := t.ForSweep(o); err != nil {
		return t, fmt.Errorf("BASE_TARGET %s: %w", o.BaseTargetFile, err)
	}
	if err := t.CheckRunnable(o.Scenario); err != nil {
		return t, fmt.Errorf("BASE_TARGET %s: %w", o.BaseTargetFile, err)
	}
	if err := t.CheckProfileFor(o); err != nil {
		return t, fmt.Errorf("BASE_TARGET %s: %w", o.BaseTargetFile, err)
	}
	return t, nil
}

package harness

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/stats"
)

// The two-arm sweep's knobs and their defaults (docs/compare.md has the
// budget they make).
const (
	// The first pass of a two-arm sweep (DURATION, WARMUP there): short
	// points, only to find each batch size's ceiling rung.
	FirstPassDuration      = 3 * time.Second
	FirstPassWarmup        = 1 * time.Second
	QuickFirstPassDuration = 2 * time.Second
	QuickFirstPassWarmup   = 1 * time.Second

	// The compare phase's repeats (COMPARE_DURATION, COMPARE_WARMUP).
	DefaultCompareDuration = 5 * time.Second
	DefaultCompareWarmup   = 2 * time.Second
	QuickCompareDuration   = 2 * time.Second
	QuickCompareWarmup     = 1 * time.Second
)

func (o *Options) setCompareDefaults(quick bool) {
	o.CompareReps, o.Alpha, o.CompareStop = DefaultCompareReps, DefaultAlpha, DefaultCompareStop
	o.CompareDuration, o.CompareWarmup = DefaultCompareDuration, DefaultCompareWarmup
	if quick {
		o.CompareDuration, o.CompareWarmup = QuickCompareDuration, QuickCompareWarmup
	}
}

// TwoArm reports whether o asks for a two-arm sweep (BASE_TARGET set).
func (o *Options) TwoArm() bool { return strings.TrimSpace(o.BaseTargetFile) != "" }

// SetTwoArmDefaults lays the two-arm sweep's first-pass window and warm-up
// over DefaultOptions' (DURATION and WARMUP mean the first pass's there).
// The CLI calls it before the env and flags, as it chooses QUICK.
func (o *Options) SetTwoArmDefaults() {
	o.Duration, o.Warmup = FirstPassDuration, FirstPassWarmup
	if o.Quick {
		o.Duration, o.Warmup = QuickFirstPassDuration, QuickFirstPassWarmup
	}
}

// BaseTargetFromEnv is BASE_TARGET, for the CLI, which needs to know
// before the defaults are laid down.
func BaseTargetFromEnv(lookup func(string) (string, bool)) string {
	v, _ := lookup("BASE_TARGET")
	return strings.TrimSpace(v)
}

// resolveCompare checks what the two-arm knobs mean together (each
// knob's own range is its Check in the knob table).
func (o *Options) resolveCompare() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if need := stats.MinPairs(o.Alpha); o.TwoArm() && o.CompareReps >= 2 && o.CompareReps < need && o.Alpha > 0 && o.Alpha < 1 {
		bad("COMPARE_REPS (--compare-reps): %d blocks cannot reach p < %g: the smallest two-sided p of a paired test over %d blocks is %.3g; use at least %d",
			o.CompareReps, o.Alpha, o.CompareReps, stats.MinSignedRankP(o.CompareReps), need)
	}
	if o.TwoArm() && o.Search == SearchBisect {
		bad("SEARCH (--search): bisect is not available in a two-arm sweep (BASE_TARGET %s): its first pass runs the ladder", o.BaseTargetFile)
	}
	if o.TwoArm() && o.HeadroomProbe > 0 {
		bad("HEADROOM_PROBE (--headroom-probe): not available in a two-arm sweep (BASE_TARGET %s): run the probe in a single-arm sweep", o.BaseTargetFile)
	}
	return errors.Join(errs...)
}

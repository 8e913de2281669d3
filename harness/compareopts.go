package harness

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
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
	o.CompareReps, o.Alpha = DefaultCompareReps, DefaultAlpha
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
	if p := MinPValue(o.CompareReps); o.CompareReps >= 2 && p >= o.Alpha && o.Alpha > 0 {
		o.Notes = append(o.Notes, fmt.Sprintf("COMPARE_REPS %d cannot reach p < %g: the smallest two-sided p of %d + %d samples is %.3g, so no point can be called faster or slower",
			o.CompareReps, o.Alpha, o.CompareReps, o.CompareReps, p))
	}
	if o.TwoArm() && o.Search == SearchBisect {
		bad("SEARCH (--search): bisect is not available in a two-arm sweep (BASE_TARGET %s): its first pass runs the ladder", o.BaseTargetFile)
	}
	if o.TwoArm() && o.HeadroomProbe > 0 {
		bad("HEADROOM_PROBE (--headroom-probe): not available in a two-arm sweep (BASE_TARGET %s): run the probe in a single-arm sweep", o.BaseTargetFile)
	}
	return errors.Join(errs...)
}

// MinPValue is the smallest two-sided p the Mann-Whitney U test can give
// with n samples per arm (no ties, full separation): 2 / C(2n, n).
func MinPValue(n int) float64 {
	c := 1.0
	for i := 1; i <= n; i++ {
		c = c * float64(n+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

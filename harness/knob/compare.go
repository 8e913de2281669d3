package knob

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/cpuset"
	"github.com/ceiling-bench/ceiling/result"
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

	// The compare phase's repeats (COMPARE_DURATION, COMPARE_WARMUP)
	// under COMPARE_SCOPE=headline, the default, QUICK or not: short
	// windows, so that the budget buys many blocks and each block's two
	// runs lie close together in time (docs/compare.md, "Why 1 s
	// windows": chosen from same-day recordings before the validation
	// runs).
	HeadlineCompareDuration = 1 * time.Second
	HeadlineCompareWarmup   = 1 * time.Second
	// COMPARE_SCOPE=curve's, as before the budget.
	CurveCompareDuration      = 5 * time.Second
	CurveCompareWarmup        = 2 * time.Second
	QuickCurveCompareDuration = 2 * time.Second
	QuickCurveCompareWarmup   = 1 * time.Second

	// The two-arm run's budget (COMPARE_BUDGET, COMPARE_SCOPE=headline).
	DefaultCompareBudget = 5 * time.Minute
	QuickCompareBudget   = 2 * time.Minute
)

func (o *Options) setCompareDefaults(quick bool) {
	o.CompareReps, o.Alpha, o.CompareStop = result.DefaultCompareReps, result.DefaultAlpha, result.DefaultCompareStop
	o.CompareMode, o.CompareScope, o.FailOn = ModeAuto, result.DefaultCompareScope, result.FailOnNever
	o.CompareArms = result.ArmsAuto
	o.CompareProfile = ProfileAuto
	o.CompareDuration, o.CompareWarmup, o.CompareBudget = HeadlineCompareDuration, HeadlineCompareWarmup, DefaultCompareBudget
	if quick {
		o.CompareBudget = QuickCompareBudget
	}
}

// TwoArm reports whether o asks for a two-arm sweep (BASE_TARGET set).
func (o *Options) TwoArm() bool { return strings.TrimSpace(o.BaseTargetFile) != "" }

// SetTwoArmDefaults lays the two-arm sweep's first-pass window and warm-up
// over DefaultOptions' (DURATION and WARMUP mean the first pass's there),
// and the compare repeats' window and warm-up of the scope the run will
// have (COMPARE_SCOPE, "" for the default): the curve scope keeps its
// longer windows. The CLI calls it before the env and flags, as it
// chooses QUICK.
func (o *Options) SetTwoArmDefaults(scope string) {
	o.Duration, o.Warmup = FirstPassDuration, FirstPassWarmup
	if o.Quick {
		o.Duration, o.Warmup = QuickFirstPassDuration, QuickFirstPassWarmup
	}
	o.CompareDuration, o.CompareWarmup = HeadlineCompareDuration, HeadlineCompareWarmup
	if scope == result.ScopeCurve {
		o.CompareDuration, o.CompareWarmup = CurveCompareDuration, CurveCompareWarmup
		if o.Quick {
			o.CompareDuration, o.CompareWarmup = QuickCurveCompareDuration, QuickCurveCompareWarmup
		}
	}
}

// CompareScopeFromEnv is COMPARE_SCOPE as given ("" when unset), for the
// CLI, which lays the compare windows' defaults by it.
func CompareScopeFromEnv(lookup func(string) (string, bool)) string {
	v, _ := lookup("COMPARE_SCOPE")
	return strings.TrimSpace(v)
}

// BaseTargetFromEnv is BASE_TARGET, for the CLI, which needs to know
// before the defaults are laid down.
func BaseTargetFromEnv(lookup func(string) (string, bool)) string {
	v, _ := lookup("BASE_TARGET")
	return strings.TrimSpace(v)
}

// When a two-arm sweep profiles its arms (COMPARE_PROFILE,
// docs/compare.md "Why is it slower"): auto where the headline's verdict
// is slower, on whatever the verdict, off never.
const (
	ProfileAuto = "auto"
	ProfileOn   = "on"
	ProfileOff  = "off"
)

// WantsProfile: a two-arm sweep whose headline verdict is verdict runs
// its profiled blocks under COMPARE_PROFILE mode.
func WantsProfile(mode, verdict string) bool {
	switch mode {
	case ProfileOn:
		return true
	case ProfileAuto:
		return verdict == result.CompareSlower
	}
	return false
}

// The comparison's modes (COMPARE_MODE, docs/compare.md "Duet mode"):
// interleaved runs the arms one after the other on the same CPUs; duet
// runs them at the same time, each on its own half of the machine,
// swapping the halves from block to block; auto is duet where the
// machine has the CPUs for two halves, else interleaved.
const (
	ModeAuto        = "auto"
	ModeInterleaved = "interleaved"
	ModeDuet        = "duet"
)

// ParseHalf reads DUET_CPUSETS: the second half as SRV/LT, each a CPU
// list in taskset's syntax ("3/2", "4-5/6").
func ParseHalf(v string) (srv, gen cpuset.Set, err error) {
	s, g, ok := strings.Cut(v, "/")
	if !ok {
		return nil, nil, fmt.Errorf("%q is not SRV/LT (the second half's server CPUs, a slash, its generator CPUs: 3/2)", v)
	}
	if srv, err = cpuset.Parse("server", strings.TrimSpace(s)); err != nil {
		return nil, nil, err
	}
	if gen, err = cpuset.Parse("generator", strings.TrimSpace(g)); err != nil {
		return nil, nil, err
	}
	return srv, gen, nil
}

// Search modes (SEARCH), as the result's config records them.
const (
	SearchLadder = result.SearchLadder
	SearchBisect = result.SearchBisect
)

// ScenarioDir is where SCENARIO=<name> finds <name>.json when no scenario
// of that name is registered (SCENARIO=rooms).
const ScenarioDir = "benchmark/scenarios"

// scenarioFileExists reports whether SCENARIO=name names a file of
// ScenarioDir.
func scenarioFileExists(name string) bool {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return false
	}
	_, err := os.Stat(filepath.Join(ScenarioDir, name+".json"))
	return err == nil
}

// ServerCosts is what a server takes to become ready after it is
// started, and to stop after SIGTERM (SERVER_COSTS, a target file's
// costs); zero: not known.
type ServerCosts struct{ Ready, Stop time.Duration }

// IsZero reports whether the costs are unknown.
func (c ServerCosts) IsZero() bool { return c.Ready == 0 && c.Stop == 0 }

// String is READY/STOP, as SERVER_COSTS takes it ("" when unknown).
func (c ServerCosts) String() string {
	if c.IsZero() {
		return ""
	}
	return c.Ready.String() + "/" + c.Stop.String()
}

// ParseServerCosts reads READY/STOP ("2s/4s").
func ParseServerCosts(v string) (ServerCosts, error) {
	r, s, ok := strings.Cut(strings.TrimSpace(v), "/")
	if !ok {
		return ServerCosts{}, fmt.Errorf("%q is not READY/STOP, two durations such as 2s/4s", v)
	}
	ready, err1 := ParseSeconds(strings.TrimSpace(r))
	stop, err2 := ParseSeconds(strings.TrimSpace(s))
	if err1 != nil || err2 != nil || ready < 0 || stop < 0 {
		return ServerCosts{}, fmt.Errorf("%q is not READY/STOP, two durations such as 2s/4s", v)
	}
	return ServerCosts{Ready: ready, Stop: stop}, nil
}

// ParseRebootEvery reads COMPARE_REBOOT_EVERY: auto (0), never (-1) or a
// count of blocks.
func ParseRebootEvery(v string) (int, error) {
	switch v = strings.TrimSpace(v); v {
	case "auto", "":
		return 0, nil
	case "never":
		return -1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not auto, never or a count of blocks (1 or more)", v)
	}
	return n, nil
}

// RebootEveryString is COMPARE_REBOOT_EVERY's words for n.
func RebootEveryString(n int) string {
	switch {
	case n == 0:
		return "auto"
	case n < 0:
		return "never"
	}
	return strconv.Itoa(n)
}

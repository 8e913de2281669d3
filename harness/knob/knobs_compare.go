package knob

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ceiling-bench/ceiling/result"
)

// compareKnobs are the two-arm sweep's knobs (docs/compare.md), after
// sweepKnobs in the table.
var compareKnobs = []Knob{
	{
		Env: "BASE_TARGET", Flag: "base-target", Arg: "FILE", Default: "none (single-arm sweep)", Doc: DocCompare,
		Help:  "the base arm's target file; setting it makes the sweep two-arm: base and head (`TARGET`) in one run, compared",
		Parse: stringParse(func(o *Options) *string { return &o.BaseTargetFile }),
		Get:   func(o *Options) string { return o.BaseTargetFile },
	},
	{
		Env: "COMPARE_REPS", Flag: "compare-reps", Arg: "N", Default: "`8` (under COMPARE_BUDGET: what it buys)", Doc: DocCompare,
		Help:  "blocks (one repeat per arm, back to back) with both arms clean wanted at each compared point, when COMPARE_BUDGET is 0 or COMPARE_SCOPE is curve (under a budget the blocks are what the budget buys after the first pass); a block that lost a repeat (contended, failed) is run again, up to twice this many blocks in all. The paired test needs at least 6 at ALPHA 0.05 (the smallest two-sided p over 5 blocks is 0.0625, over 6 0.031, over 8 0.0078): fewer exits 2, and so does more than 100",
		Parse: intParse(func(o *Options) *int { return &o.CompareReps }),
		Check: func(o *Options) error {
			if o.CompareReps < 2 {
				return fmt.Errorf("%d is below 2: the test needs at least two blocks (6 or more to reach p < 0.05)", o.CompareReps)
			}
			if o.CompareReps > MaxCompareReps {
				return fmt.Errorf("%d is above %d: each block runs both arms once at every compared point; split the comparison into runs", o.CompareReps, MaxCompareReps)
			}
			return nil
		},
		Get: func(o *Options) string { return strconv.Itoa(o.CompareReps) },
	},
	{
		Env: "ALPHA", Flag: "alpha", Arg: "LEVEL", Default: "`0.05`", Doc: DocCompare,
		Help: "significance level, in (0, 1); the intervals are at 1 − ALPHA",
		Parse: func(o *Options, _, v string) error {
			f, err := ParseFraction(v)
			if err != nil {
				return fmt.Errorf("%q is not a significance level in (0, 1) such as 0.05", v)
			}
			o.Alpha = f
			return nil
		},
		Check: func(o *Options) error {
			if !(o.Alpha > 0 && o.Alpha < 1) || math.IsNaN(o.Alpha) {
				return fmt.Errorf("%v is not a significance level in (0, 1) such as 0.05", o.Alpha)
			}
			return nil
		},
		Get: func(o *Options) string { return strconv.FormatFloat(o.Alpha, 'g', -1, 64) },
	},
	{
		Env: "COMPARE_STOP", Flag: "compare-stop", Arg: "RULE", Default: "`obf`", Doc: DocCompare,
		Help:  "when a compared point stops: `fixed` runs COMPARE_REPS clean blocks and tests once at ALPHA; `pocock` or `obf` look after every block from the 6th and stop once the paired test is decided at that look's level (alpha spent over the looks, Pocock or O'Brien-Fleming, so looking early adds no false alarms), at the price of a stricter last look (docs/compare.md, \"Validation\")",
		Parse: stringParse(func(o *Options) *string { return &o.CompareStop }),
		Check: oneOf(func(o *Options) string { return o.CompareStop }, "stopping rule", result.StopPocock, result.StopOBF, result.StopFixed),
		Get:   func(o *Options) string { return o.CompareStop },
	},
	{
		Env: "COMPARE_SCOPE", Flag: "compare-scope", Arg: "SCOPE", Default: "`headline`", Doc: DocCompare,
		Help:  "where the compare phase runs its blocks: `headline` searches the headline batch's ladder for its ceiling rung (both arms at each rung), runs every other batch once per arm at that rung (information, not compared), and compares that rung only; `curve` runs every rung of every batch once per arm and compares each batch's ceiling rung (docs/compare.md, \"What it runs\")",
		Parse: stringParse(func(o *Options) *string { return &o.CompareScope }),
		Check: oneOf(func(o *Options) string { return o.CompareScope }, "comparison scope", result.ScopeHeadline, result.ScopeCurve),
		Get:   func(o *Options) string { return o.CompareScope },
	},
	{
		Env: "COMPARE_PREFER", Flag: "compare-prefer", Arg: "N", Default: "none", Doc: DocCompare,
		Help:  "COMPARE_SCOPE=headline: the connections to compare at when the arms' ceiling rungs differ and both ran clean there (the last published headline's rung, so that pull requests are compared at one point); 0: the rung where both ran clean with the highest mean",
		Parse: intParse(func(o *Options) *int { return &o.ComparePrefer }),
		Check: func(o *Options) error {
			if o.ComparePrefer < 0 || o.ComparePrefer > MaxConnections {
				return fmt.Errorf("%d is not a connection count in 0..%d", o.ComparePrefer, MaxConnections)
			}
			return nil
		},
		Get: func(o *Options) string { return strconv.Itoa(o.ComparePrefer) },
	},
	{
		Env: "FAIL_ON", Flag: "fail-on", Arg: "POLICY", Default: "`never`", Doc: DocCompare,
		Help:  "a two-arm sweep exits 1 when the headline's verdict is this: `slower` (a significant regression), `inconclusive` (cannot_conclude), both as `slower,inconclusive`, or `never`; as `ceiling publish comment --fail-on`",
		Parse: stringParse(func(o *Options) *string { return &o.FailOn }),
		Check: func(o *Options) error {
			_, _, err := result.ParseFailOn(o.FailOn)
			return err
		},
		Get: func(o *Options) string { return o.FailOn },
	},
	compareKnob(durationKnob("COMPARE_BUDGET", "compare-budget", "`5m` (quick: `2m`)", "COMPARE_SCOPE=headline: the whole two-arm run's time: after the first pass, blocks at the headline rung until the paired test decides (COMPARE_STOP's looks) or no further block fits; one that cannot fit the first pass and 6 blocks exits 2, saying what it needs; `0`: no budget, COMPARE_REPS blocks",
		func(o *Options) *time.Duration { return &o.CompareBudget }, false)),
	{
		Env: "COMPARE_MODE", Flag: "compare-mode", Arg: "KIND", Default: "`auto`", Doc: DocCompare,
		Help:  "`interleaved` runs the arms one after the other on the same CPUs; `duet` runs each block's two repeats at the same instant, each arm on its own half of the machine (SRV_CPUSET + LT_CPUSET, and DUET_CPUSETS), swapping the halves from block to block, so that a noisy neighbour hits both; `auto` is duet where the machine has the CPUs for two halves on disjoint cores, else interleaved (docs/compare.md, \"Duet mode\")",
		Parse: stringParse(func(o *Options) *string { return &o.CompareMode }),
		Check: oneOf(func(o *Options) string { return o.CompareMode }, "comparison mode", ModeAuto, ModeInterleaved, ModeDuet),
		Get:   func(o *Options) string { return o.CompareMode },
	},
	{
		Env: "COMPARE_PROFILE", Flag: "compare-profile", Arg: "WHEN", Default: "`auto`", Doc: DocCompare,
		Help:  "when a two-arm sweep profiles both arms' servers (perf record -e cpu-clock -g, or the target's pprof URL) in extra blocks after the verdict, so that profiling never perturbs the blocks that decided: `auto` where the headline is slower, `on` whatever the verdict, `off` never; the result's comparison.headline.profile_diff says which functions grew per message handled, or why there is no profile (docs/compare.md, \"Why is it slower\")",
		Parse: stringParse(func(o *Options) *string { return &o.CompareProfile }),
		Check: oneOf(func(o *Options) string { return o.CompareProfile }, "profile mode", ProfileAuto, ProfileOn, ProfileOff),
		Get:   func(o *Options) string { return o.CompareProfile },
	},
	{
		Env: "DUET_CPUSETS", Flag: "duet-cpusets", Arg: "SRV/LT", Default: "picked from the CPUs left", Doc: DocCompare,
		Help: "a duet's second half: its server CPUs, a slash, its generator CPUs (`3/2`), as many per side as SRV_CPUSET and LT_CPUSET; unset, the CPUs outside both sets that share no core with them",
		Parse: func(o *Options, _, v string) error {
			srv, gen, err := ParseHalf(v)
			o.DuetServerCPUs, o.DuetGeneratorCPUs = srv, gen
			return err
		},
		Get: func(o *Options) string {
			if o.DuetServerCPUs == nil {
				return ""
			}
			return o.DuetServerCPUs.String() + "/" + o.DuetGeneratorCPUs.String()
		},
	},
	{
		Env: "COMPARE_ARMS", Flag: "compare-arms", Arg: "ARMS", Default: "`auto`", Doc: DocCompare,
		Help:  "`fresh` boots each point's server and stops it after the point (seed 002's method); `warm` keeps each arm's server up across points, frozen while the other arm is measured, and boots both afresh after the first pass and every COMPARE_REBOOT_EVERY blocks; `auto` is warm where the servers' measured boot and stop make that buy 25% more blocks, else fresh (docs/compare.md, \"Warm arms\")",
		Parse: stringParse(func(o *Options) *string { return &o.CompareArms }),
		Check: oneOf(func(o *Options) string { return o.CompareArms }, "way to run the arms", result.ArmsAuto, result.ArmsWarm, result.ArmsFresh),
		Get:   func(o *Options) string { return o.CompareArms },
	},
	{
		Env: "COMPARE_REBOOT_EVERY", Flag: "compare-reboot-every", Arg: "N", Default: "`auto`", Doc: DocCompare,
		Help: "warm arms: boot both servers afresh every N blocks, `never`, or `auto`: as often as keeps the reboots within a fifth of the blocks' time, so that the comparison samples more than one boot of each server",
		Parse: func(o *Options, _, v string) error {
			n, err := ParseRebootEvery(v)
			o.CompareRebootEvery = n
			return err
		},
		Get: func(o *Options) string { return RebootEveryString(o.CompareRebootEvery) },
	},
	{
		Env: "SERVER_COSTS", Flag: "server-costs", Arg: "READY/STOP", Default: "none (the target files' `costs`, else measured)", Doc: DocCompare,
		Help: "what a server takes to be ready after it starts and to stop after SIGTERM (`2s/4s`), so that COMPARE_BUDGET is planned, and refused when too short, before anything boots; `ceiling action` sets it from the last published result; unset, the target files' `costs`, else timed on the first block",
		Parse: func(o *Options, _, v string) error {
			c, err := ParseServerCosts(v)
			o.ServerCosts = c
			return err
		},
		Get: func(o *Options) string { return o.ServerCosts.String() },
	},
	windowKnob(durationKnob("COMPARE_DURATION", "compare-duration", "`1s` (COMPARE_SCOPE=curve: `5s`, quick `2s`)", "measured window of each compare repeat; unset, a budgeted headline comparison sizes it (and the warm-up) from its first pass's timelines, keeping 1 s unless another window buys a 10% smaller MDC (docs/compare.md, \"Windows sized to the server's noise\"); given, it is used as it is",
		func(o *Options) *time.Duration { return &o.CompareDuration }, true)),
	windowKnob(durationKnob("COMPARE_WARMUP", "compare-warmup", "`1s` (COMPARE_SCOPE=curve: `2s`, quick `1s`)", "warm-up of each compare repeat (a freshly booted server's JIT and caches warm here, a thawed warm arm's timers catch up); set, with COMPARE_DURATION, it fixes the blocks' windows, which a budgeted headline comparison otherwise sizes from its first pass (docs/compare.md, \"Windows sized to the server's noise\")",
		func(o *Options) *time.Duration { return &o.CompareWarmup }, false)),
}

// windowKnob is a compare window's knob: given, it fixes the blocks'
// windows, which the first pass would otherwise size
// (Options.CompareWindowsGiven).
func windowKnob(k Knob) Knob {
	k = compareKnob(k)
	parse := k.Parse
	k.Parse = func(o *Options, name, v string) error {
		o.CompareWindowsGiven = true
		return parse(o, name, v)
	}
	return k
}

package harness

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/internal/stats"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// resolveCompare checks what the two-arm knobs mean together (each
// knob's own range is its Check in the knob table).
func (o *draft) resolveCompare() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if need := stats.MinPairs(o.Alpha); o.TwoArm() && o.CompareReps >= 2 && o.CompareReps < need && o.Alpha > 0 && o.Alpha < 1 {
		bad("COMPARE_REPS (--compare-reps): %d blocks cannot reach p < %g: the smallest two-sided p of a paired test over %d blocks is %.3g; use at least %d",
			o.CompareReps, o.Alpha, o.CompareReps, stats.MinSignedRankP(o.CompareReps), need)
	}
	if o.TwoArm() && o.Search == knob.SearchBisect {
		bad("SEARCH (--search): bisect is not available in a two-arm sweep (BASE_TARGET %s): its first pass runs the ladder", o.BaseTargetFile)
	}
	if o.FailOn != "" && o.FailOn != result.FailOnNever && !o.TwoArm() {
		bad("FAIL_ON (--fail-on): %q gates a comparison, and a sweep without BASE_TARGET has none", o.FailOn)
	}
	if o.TwoArm() && o.HeadroomProbe > 0 {
		bad("HEADROOM_PROBE (--headroom-probe): not available in a two-arm sweep (BASE_TARGET %s): run the probe in a single-arm sweep", o.BaseTargetFile)
	}
	return errors.Join(errs...)
}

// resolveDuet settles COMPARE_MODE once the CPU sets are known. A duet's
// first half is SRV_CPUSET and LT_CPUSET; its second is DUET_CPUSETS or,
// when unset, pinning.DuetHalf's pick from the CPUs available. auto
// falls back to interleaved (with a note) where no second half fits, or
// where the generator cannot be gated (agents, a GENERATOR of one's
// own); an explicit duet there is an error.
func (o *draft) resolveDuet(available pinning.CPUSet) error {
	if !o.TwoArm() {
		return nil
	}
	asked := o.CompareMode
	if asked == knob.ModeInterleaved || asked == "" { // "": knob.Options built by hand, as before the modes
		o.CompareMode = knob.ModeInterleaved
		o.DuetServerCPUs, o.DuetGeneratorCPUs = nil, nil
		return nil
	}
	fallback := func(why string) error {
		if asked == knob.ModeDuet {
			return fmt.Errorf("COMPARE_MODE (--compare-mode) duet: %s (COMPARE_MODE=interleaved runs the arms one after the other)", why)
		}
		o.CompareMode = knob.ModeInterleaved
		o.Notes = append(o.Notes, "COMPARE_MODE auto: interleaved, since "+why)
		return nil
	}
	switch {
	case o.CompareArms == result.ArmsWarm:
		return fallback("COMPARE_ARMS=warm keeps each arm's server up on SRV_CPUSET, where a duet boots every point's servers on its half")
	case o.Agents > 0 || o.AgentsListen != "":
		return fallback("the generator runs as agents (AGENTS, AGENTS_LISTEN), which a duet cannot start on one instant")
	case strings.TrimSpace(o.Generator) != "":
		if asked == knob.ModeAuto {
			return fallback("GENERATOR is set and a duet needs its generator to honour --start-gate (docs/ARCHITECTURE.md); COMPARE_MODE=duet asks for it")
		}
	}
	if o.DuetServerCPUs == nil {
		srv, gen, err := pinning.DuetHalf(o.ServerCPUs, o.GeneratorCPUs, available)
		if err != nil {
			return fallback(err.Error())
		}
		o.DuetServerCPUs, o.DuetGeneratorCPUs = srv, gen
	}
	first := append(slices.Clone(o.ServerCPUs), o.GeneratorCPUs...)
	second := append(slices.Clone(o.DuetServerCPUs), o.DuetGeneratorCPUs...)
	slices.Sort(first)
	slices.Sort(second)
	if len(o.DuetServerCPUs) != len(o.ServerCPUs) || len(o.DuetGeneratorCPUs) != len(o.GeneratorCPUs) {
		return fmt.Errorf("DUET_CPUSETS (--duet-cpusets) %s/%s: the second half must have as many CPUs per side as the first (server %s, generator %s)",
			o.DuetServerCPUs, o.DuetGeneratorCPUs, o.ServerCPUs, o.GeneratorCPUs)
	}
	if shared := pinning.Overlap(first, second); len(shared) > 0 {
		if !o.AllowOverlap {
			return fmt.Errorf("DUET_CPUSETS (--duet-cpusets) %s/%s shares CPUs %s with SRV_CPUSET %s and LT_CPUSET %s: the arms would compete for them (ALLOW_OVERLAP=1 runs this simulated split anyway)",
				o.DuetServerCPUs, o.DuetGeneratorCPUs, shared, o.ServerCPUs, o.GeneratorCPUs)
		}
		o.Notes = append(o.Notes, fmt.Sprintf("duet halves share CPUs %s (ALLOW_OVERLAP): a simulated split, whose arms compete for those CPUs; its comparison is not a duet measurement", shared))
	}
	o.CompareMode = knob.ModeDuet
	return nil
}

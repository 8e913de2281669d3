package result

import (
	"fmt"
	"math"
)

// RoleHeadroom is the headline point run once more with the generator's
// CPU capped by a cgroup quota (HEADROOM_PROBE).
const RoleHeadroom = "headroom_probe"

// The headroom probe answers what CPU figures cannot: was the generator
// the limit? The headline point runs again with the generator's process
// tree held to a fraction of its cores by the kernel's CPU controller
// (pinning.Throttle: cgroup v1 cpu.cfs_quota_us, or v2 cpu.max), joined
// before exec so the cap holds from the generator's first instruction. If throughput holds (within
// the A-A noise floor, at least HeadroomTolerancePct) the generator had
// headroom and was not the limit; if it falls, the generator's CPU bounds
// the point at least at that quota.

// HeadroomTolerancePct is the smallest change the probe reads as a change,
// when the noise floor is smaller.
const HeadroomTolerancePct = 5.0

// headroomOf summarizes the probe point against the headline.
func headroomOf(r *Result, fraction float64) *HeadroomProbe {
	for _, p := range r.Curve {
		if p.Role != RoleHeadroom {
			continue
		}
		h := &HeadroomProbe{QuotaFraction: fraction, Index: p.Index, Status: p.Status, ThroughputPerS: p.ThroughputPerS, GeneratorCPU: p.GeneratorCPU}
		switch {
		case p.Status != StatusOK:
			h.Conclusion = "probe failed: " + p.FailReason
		case !p.Clean:
			// Errors or missing connections change the load, not the
			// generator's CPU: the comparison would measure them.
			h.Conclusion = fmt.Sprintf("probe not clean (%d errors, saturated or connections short): no conclusion", p.Errors)
		case !r.Headline.Clean || r.Headline.ThroughputPerS <= 0:
			h.Conclusion = "no clean headline to compare with"
		default:
			h.ChangePct = (p.ThroughputPerS - r.Headline.ThroughputPerS) / r.Headline.ThroughputPerS * 100
			tol := HeadroomTolerancePct
			if r.NoiseFloorPct != nil {
				tol = math.Max(tol, *r.NoiseFloorPct)
			}
			h.TolerancePct = tol
			if h.ChangePct >= -tol {
				h.GeneratorHadHeadroom = true
				h.Conclusion = fmt.Sprintf("throughput held (%+.1f%%, within %.1f%%) with the generator capped at %.0f%% of its cores: the generator was not the limit", h.ChangePct, tol, fraction*100)
			} else {
				h.Conclusion = fmt.Sprintf("throughput fell %.1f%% (beyond %.1f%%) with the generator capped at %.0f%% of its cores: its CPU bounds this point, the headline may be a generator limit", -h.ChangePct, tol, fraction*100)
			}
		}
		return h
	}
	return nil
}

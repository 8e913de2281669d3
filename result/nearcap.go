package result

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/wire"
)

// NearCap is a point whose throughput came within wire.NearCapPct of
// the generator's calibrated cap for its batch, scaled by the generator's
// cores (Point.NearCap).
type NearCap struct {
	CapPerS   float64 `json:"cap_per_s"`  // the cap per core x the generator's cores
	PctOfCap  float64 `json:"pct_of_cap"` // the point's throughput, in percent of it
	WithinPct float64 `json:"within_pct"` // the margin that flags: wire.NearCapPct
	Saturated bool    `json:"calibration_saturated"`
}

// NearCapMark opens what flagNearCap adds to a verdict reason and to the
// warnings.
const NearCapMark = "near the generator's calibrated cap"

// flagNearCap marks every ok point whose throughput is within
// wire.NearCapPct of its batch's calibrated cap (times the
// generator's cores): Point.NearCap, a note on its verdict reason and one
// warning. The verdict itself stays: being near the cap says the point may
// measure the generator, the verdict's evidence says whether it did.
// Idempotent, like Summarize.
func (r *Result) flagNearCap() {
	d := r.Meta.Calibration
	cores := len(r.Meta.Pinning.GeneratorGranted)
	if cores == 0 {
		cores = len(r.Meta.Pinning.GeneratorRequested)
	}
	usable := d != nil && d.RecordSize == r.Config.RecordSize
	if d != nil && !usable {
		r.Warn(fmt.Sprintf("calibration: measured with %d-byte messages, the sweep sent %d: its caps do not apply and no point is flagged", d.RecordSize, r.Config.RecordSize))
	}
	if usable {
		var missing []string
		for _, b := range r.Config.BatchLadder {
			if _, ok := d.CapFor(r.Config.Scenario, b); !ok {
				missing = append(missing, strconv.Itoa(b))
			}
		}
		switch {
		case len(missing) == len(r.Config.BatchLadder) && len(missing) > 0:
			why := wire.SkipReason(r.Config.Scenario)
			if why == "" {
				why = "it was measured at other batch sizes"
			}
			r.Warn(fmt.Sprintf("calibration: no cap for %s (%s): no point is flagged", r.Config.Scenario, why))
		case len(missing) > 0:
			r.Warn(fmt.Sprintf("calibration: no cap for %s batch %s: those points are not flagged", r.Config.Scenario, strings.Join(missing, ", ")))
		}
	}
	var flagged []string
	for i := range r.Curve {
		p := &r.Curve[i]
		p.NearCap = nil
		if j := strings.Index(p.VerdictReason, NearCapMark); j >= 0 {
			p.VerdictReason = strings.TrimSuffix(strings.TrimRight(p.VerdictReason[:j], " "), ";")
		}
		if !usable || p.Status != StatusOK {
			continue
		}
		c, ok := d.CapFor(r.Config.Scenario, p.Batch)
		if !ok {
			continue
		}
		near, limit := wire.NearCap(c, cores, p.ThroughputPerS, wire.NearCapPct)
		if !near {
			continue
		}
		p.NearCap = &NearCap{CapPerS: limit, PctOfCap: p.ThroughputPerS / limit * 100, WithinPct: wire.NearCapPct, Saturated: c.Saturated}
		note := fmt.Sprintf("%s (%.0f%% of %.0f msg/s for batch %d on %s)", NearCapMark, p.NearCap.PctOfCap, limit, p.Batch, plural(max(cores, 1), "generator core"))
		if p.VerdictReason != "" {
			note = "; " + note
		}
		p.VerdictReason += note
		flagged = append(flagged, fmt.Sprintf("#%d", p.Index))
	}
	if len(flagged) > 0 {
		r.Warn(fmt.Sprintf("%s: points %s reached within %.0f%% of what the generator drives against a null sink (meta.calibration): they may measure the generator; give it more cores (LT_CPUSET)",
			NearCapMark, strings.Join(flagged, ", "), wire.NearCapPct))
	}
}

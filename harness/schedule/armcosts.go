package schedule

import (
	"slices"
	"time"

	"github.com/ceiling-bench/ceiling/result"
)

// armState is how a two-arm sweep's arms run their servers.
type armState struct {
	decided bool   // warm or fresh is chosen (ArmsAuto: after the first block)
	warm    bool   // the servers are kept up across points
	why     string // the choice, in words
	// up: the arm's server is up (warm), as the steps given left it.
	up    map[string]bool
	boots []result.ArmBoot
}

func (a *armState) upArms() []string {
	var out []string
	for _, arm := range []string{result.ArmBase, result.ArmHead} {
		if a.up[arm] {
			out = append(out, arm)
		}
	}
	return out
}

func (a *armState) down() []string {
	var out []string
	for _, arm := range []string{result.ArmBase, result.ArmHead} {
		if !a.up[arm] {
			out = append(out, arm)
		}
	}
	return out
}

// booted takes in a warm arm's boot: its cost, or its failure (the arm
// is then down).
func (a *armState) booted(e ArmEvent, ready func(ArmEvent)) {
	ready(e)
	a.boots = append(a.boots, result.ArmBoot{Arm: e.Arm, ReadyNs: int64(e.Cost), Failed: e.Failed})
	if e.Failed != "" {
		a.up[e.Arm] = false
	}
}

// costBook is what the run has measured of its costs: each arm's ready
// and stop times (a fresh point's own, or a warm arm's boot and stop),
// each point's overhead beside them and its load, and the compare
// blocks' times; now is the cost model they give, the plan's Costs
// where nothing was measured.
type costBook struct {
	given     Costs
	readies   map[string][]time.Duration
	stops     map[string][]time.Duration
	overheads []time.Duration
	blocks    map[bool][]time.Duration // compare blocks' time, by warm
	timed     int                      // points and steps timed
}

func newCostBook(given Costs) costBook {
	return costBook{given: given, readies: map[string][]time.Duration{}, stops: map[string][]time.Duration{}, blocks: map[bool][]time.Duration{}}
}

// ready and stop take in a warm arm's boot and stop; a boot that failed
// times nothing.
func (b *costBook) ready(e ArmEvent) {
	b.timed++
	if e.Failed == "" {
		b.readies[e.Arm] = append(b.readies[e.Arm], e.Cost)
	}
}

func (b *costBook) stop(e ArmEvent) {
	b.timed++
	b.stops[e.Arm] = append(b.stops[e.Arm], e.Cost)
}

// point takes in a fresh point's own boot and stop.
func (b *costBook) point(o Observed) {
	if o.ReadyCost > 0 {
		b.readies[o.Arm] = append(b.readies[o.Arm], o.ReadyCost)
	}
	if o.StopCost > 0 {
		b.stops[o.Arm] = append(b.stops[o.Arm], o.StopCost)
	}
}

// block takes in a block's time (Observed.Wall of its points): each
// point's overhead beside its load, ready and stop, and a compare
// block's whole time.
func (b *costBook) block(s Step, pts []Observed, fresh bool) {
	b.timed++
	var wall time.Duration
	for _, o := range pts {
		if o.Lost || o.Wall <= 0 {
			continue
		}
		load := o.Load
		over := o.Wall - load - o.ReadyCost - o.StopCost
		if over > 0 {
			b.overheads = append(b.overheads, over)
		}
		wall += o.Wall
	}
	if len(pts) == 2 && pts[0].Role == result.RoleCompare && wall > 0 && !pts[0].Lost && !pts[1].Lost {
		b.blocks[!fresh] = append(b.blocks[!fresh], wall)
	}
}

// meanBlock is the compare blocks' mean time, warm or fresh; 0: none yet.
func (b *costBook) meanBlock(warm bool) time.Duration {
	bs := b.blocks[warm]
	if len(bs) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range bs {
		sum += d
	}
	return sum / time.Duration(len(bs))
}

// now is the cost model: the median of what was measured, else what the
// plan was given.
func (b *costBook) now() Costs {
	c := b.given
	arm := func(a string, given ArmCost) ArmCost {
		r, s := b.readies[a], b.stops[a]
		switch {
		case len(r) > 0 && len(s) > 0:
			return ArmCost{Ready: median(r), Stop: median(s), Known: true}
		case len(r) > 0 && given.Known:
			return ArmCost{Ready: median(r), Stop: given.Stop, Known: true}
		case len(r) > 0:
			// A stop not timed yet is assumed to take what the boot did.
			return ArmCost{Ready: median(r), Stop: median(r), Known: true}
		}
		return given
	}
	base, head := arm(result.ArmBase, c.Base), arm(result.ArmHead, c.Head)
	if len(b.readies) > 0 {
		c.Source = CostsMeasured
	}
	c.Base, c.Head = base, head
	if len(b.overheads) > 0 {
		c.Overhead = median(b.overheads)
	}
	return c
}

// record is one arm's costs for the result: the medians measured, and
// how many of each.
func (b *costBook) record(arm string) result.ArmCosts {
	r, s := b.readies[arm], b.stops[arm]
	out := result.ArmCosts{Boots: len(r), Stops: len(s)}
	if len(r) > 0 {
		out.ReadyNs = int64(median(r))
	}
	if len(s) > 0 {
		out.StopNs = int64(median(s))
	}
	return out
}

// median is the middle of xs (the mean of the middle two), xs not
// modified.
func median[T ~int64 | ~float64](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

package schedule

import (
	"fmt"
	"math"
	"time"

	"github.com/ceiling-bench/ceiling/result"
)

// How a two-arm sweep's arms run their servers (TwoArmPlan.Arms,
// COMPARE_ARMS): result's words.
const (
	ArmsFresh = result.ArmsFresh
	ArmsWarm  = result.ArmsWarm
	ArmsAuto  = result.ArmsAuto
)

// WarmGain is the rule of ArmsAuto: warm arms run where they buy at
// least this many times the blocks fresh servers buy in the same time. A
// warm arm carries its state from block to block (docs/compare.md,
// "Warm arms"), so it must pay for that in blocks; 25% more blocks is a
// tenth off the minimum detectable change.
const WarmGain = 1.25

// RebootShare is the most of the blocks' time that warm arms spend
// booting afresh, when RebootEvery is automatic: reboots sample the
// servers' boot-to-boot variation, which a pair of servers kept up the
// whole run would hide.
const RebootShare = 0.2

// DefaultOverhead is a point's time beside its warm-up, window, ready and
// stop, before one has been measured: starting the generator, opening its
// connections, collecting its result and freezing or thawing a warm
// server.
const DefaultOverhead = 400 * time.Millisecond

// DefaultBootCost is what a server is assumed to take to be ready and to
// stop while nothing says otherwise: refserver's, about, on this
// project's machines (docs/compare.md, "What a point costs").
const DefaultBootCost = 150 * time.Millisecond

// Window is a point's measured window and the warm-up before it.
type Window struct{ Duration, Warmup time.Duration }

// Load is the window's time: the warm-up and the window.
func (w Window) Load() time.Duration { return w.Warmup + w.Duration }

// ArmCost is what one arm's server takes to become ready after it is
// started (spawn to readiness probe) and to stop (SIGTERM to exit and
// its ports free). Known is false while nothing has measured or given
// them: the cost model then assumes DefaultBootCost.
type ArmCost struct {
	Ready, Stop time.Duration
	Known       bool
}

// Costs is what the two-arm schedule plans its time with: each arm's
// boot and stop, and a point's overhead beside those and its load. Source
// says where the arms' costs came from: CostsMeasured once a boot and a
// stop were timed in this run, else what the plan was given.
type Costs struct {
	Base, Head ArmCost
	Overhead   time.Duration
	Source     string
}

// Where Costs came from (Costs.Source, result.ArmsRecord.CostsFrom).
const (
	CostsMeasured  = "measured"
	CostsAssumed   = "assumed"
	CostsTarget    = "target file"
	CostsPublished = "last published result"
	CostsGiven     = "SERVER_COSTS"
)

func (c Costs) arm(a string) ArmCost {
	if a == result.ArmBase {
		return c.Base
	}
	return c.Head
}

func (a ArmCost) ready() time.Duration {
	if !a.Known {
		return DefaultBootCost
	}
	return a.Ready
}

func (a ArmCost) stop() time.Duration {
	if !a.Known {
		return DefaultBootCost
	}
	return a.Stop
}

func (c Costs) overhead() time.Duration {
	if c.Overhead <= 0 {
		return DefaultOverhead
	}
	return c.Overhead
}

// Point is one point's time in w: its load and overhead, plus its
// server's boot and stop when it boots its own (fresh).
func (c Costs) Point(arm string, w Window, fresh bool) time.Duration {
	d := w.Load() + c.overhead()
	if fresh {
		a := c.arm(arm)
		d += a.ready() + a.stop()
	}
	return d
}

// Block is a block's time in w: both arms' points one after the other,
// or at once in a duet (the slower of the two).
func (c Costs) Block(w Window, fresh, duet bool) time.Duration {
	b, h := c.Point(result.ArmBase, w, fresh), c.Point(result.ArmHead, w, fresh)
	if duet {
		return max(b, h)
	}
	return b + h
}

// Boot is the time to boot both arms' servers at once (the slower one's
// readiness), Stop the time to stop both at once.
func (c Costs) Boot() time.Duration { return max(c.Base.ready(), c.Head.ready()) }
func (c Costs) Stop() time.Duration { return max(c.Base.stop(), c.Head.stop()) }

// Reboot is a fresh start of both warm arms: both stopped, then both
// booted.
func (c Costs) Reboot() time.Duration { return c.Stop() + c.Boot() }

// RebootEvery is how many blocks warm arms run between fresh boots:
// every (never: 0), or, automatically (every 0), the fewest that keep
// the reboots within RebootShare of the blocks' time.
func (c Costs) RebootEvery(every int, w Window) int {
	switch {
	case every > 0:
		return every
	case every < 0:
		return 0
	}
	block := c.Block(w, false, false)
	return max(1, int(math.Ceil(float64(c.Reboot())/(RebootShare*float64(block)))))
}

// perBlock is a block's time with its share of the reboots (warm).
func (c Costs) perBlock(w Window, warm, duet bool, every int) time.Duration {
	if !warm {
		return c.Block(w, true, duet)
	}
	d := c.Block(w, false, duet)
	if k := c.RebootEvery(every, w); k > 0 {
		d += c.Reboot() / time.Duration(k)
	}
	return d
}

// Ahead is what a two-arm run still has to do before and after its
// blocks: FirstLeft first-pass points; warm arms also boot the arms when
// they are not up (Booted false), start them afresh between the first
// pass and the blocks (Turn) and stop them at the end.
type Ahead struct {
	FirstLeft    int
	Booted, Turn bool
}

// fixed is the time of what ahead holds beside the blocks.
func (c Costs) fixed(a Ahead, first Window, warm, duet bool) time.Duration {
	pts := time.Duration(a.FirstLeft) * (c.Point(result.ArmBase, first, !warm) + c.Point(result.ArmHead, first, !warm)) / 2
	if !warm {
		if duet {
			pts /= 2 // a block's two points at once
		}
		return pts
	}
	if !a.Booted {
		pts += c.Boot()
	}
	if a.Turn {
		pts += c.Reboot()
	}
	return pts + c.Stop()
}

// Blocks is how many blocks of cmp fit in left once what is ahead is
// done, warm or fresh, and need, the time left that would buy min.
func (c Costs) Blocks(left time.Duration, a Ahead, first, cmp Window, warm, duet bool, every, min int) (n int, need time.Duration) {
	fixed, per := c.fixed(a, first, warm, duet), c.perBlock(cmp, warm, duet, every)
	need = fixed + time.Duration(min)*per
	if left <= fixed || per <= 0 {
		return 0, need
	}
	return int((left - fixed) / per), need
}

// Choose is ArmsAuto's rule: warm where it buys WarmGain times the blocks
// fresh servers buy in the time left (left 0, no budget: per block), and
// why, in words.
func (c Costs) Choose(left time.Duration, a Ahead, first, cmp Window, duet bool, every int) (warm bool, why string) {
	if duet {
		return false, "fresh: a duet runs both arms at once, each on its half of the machine, and warm arms run one after the other"
	}
	src := c.Source
	if src == "" {
		src = CostsAssumed
	}
	costs := fmt.Sprintf("ready %s and %s, stop %s and %s, %s", roundCost(c.Base.ready()), roundCost(c.Head.ready()),
		roundCost(c.Base.stop()), roundCost(c.Head.stop()), src)
	if left > 0 {
		nw, needW := c.Blocks(left, a, first, cmp, true, false, every, 1)
		nf, needF := c.Blocks(left, a, first, cmp, false, false, every, 1)
		if nw >= 1 && float64(nw) >= WarmGain*float64(nf) || nw+nf == 0 && needW < needF {
			return true, fmt.Sprintf("warm: the time left buys %d blocks with the servers kept up, %d with a server booted per point (%s)", nw, nf, costs)
		}
		return false, fmt.Sprintf("fresh: the time left buys %d blocks with a server booted per point, %d with the servers kept up, short of the %.2f× warm arms must gain (%s)", nf, nw, WarmGain, costs)
	}
	fresh, kept := c.perBlock(cmp, false, false, every), c.perBlock(cmp, true, false, every)
	if float64(fresh) >= WarmGain*float64(kept) {
		return true, fmt.Sprintf("warm: a block takes %s with the servers kept up, %s with a server booted per point (%s)", roundCost(kept), roundCost(fresh), costs)
	}
	return false, fmt.Sprintf("fresh: a block takes %s with a server booted per point, %s with the servers kept up, short of the %.2f× warm arms must gain (%s)", roundCost(fresh), roundCost(kept), WarmGain, costs)
}

// roundCost is d to the tenth of a second, or the millisecond below one.
func roundCost(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

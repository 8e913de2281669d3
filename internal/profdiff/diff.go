package profdiff

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// A frame's verdict (Frame.Verdict).
const (
	Grew        = "grew"         // its cost per message rose beyond the spread
	Shrank      = "shrank"       // fell beyond the spread
	WithinNoise = "within_noise" // moved within the blocks' spread
	Untested    = "untested"     // one block in an arm: no spread to test against
)

// DefaultAlpha is the chance that an A/A comparison lists any frame at
// all (the family-wise level the rule is held to).
const DefaultAlpha = 0.05

// MinSharePct is the smallest change a frame must make, in percent of the
// base's whole CPU per message, to be listed.
const MinSharePct = 1.0

// minModelSamples is the mean samples a block a frame needs to count in
// the arm's model of the shared block-to-block variance.
const minModelSamples = 10

// Frame is one function, base against head: its mean cost per message
// over each arm's blocks (inclusive and self, CPU ns), the change of its
// inclusive cost, its rank's score and the rule's verdict on it.
type Frame struct {
	Function             string
	BaseTotal, HeadTotal float64
	BaseSelf, HeadSelf   float64
	// Change is HeadTotal - BaseTotal; ChangePct it in percent of
	// BaseTotal (NaN where the base had none).
	Change, ChangePct float64
	// Score ranks the frames: Change times the share of the larger arm's
	// cost that it is (Change·|Change|/max(BaseTotal, HeadTotal)).
	Score   float64
	Verdict string
	// Z is the change of the mean log cost in standard errors;
	// Detectable the change, in CPU ns per message, that the rule needed
	// (both 0 when untested).
	Z, Detectable float64
	// BaseSamples and HeadSamples are its samples over each arm.
	BaseSamples, HeadSamples int64
}

// Arm is one arm's blocks, summed.
type Arm struct {
	Blocks       int
	Samples      int64
	Unsymbolised int64
	Messages     float64
	// NsPerMessage is the mean over the blocks of the whole CPU per
	// message; NsPerSample the mean period of the arm's samples.
	NsPerMessage float64
	NsPerSample  float64
}

// Diff is Compare's answer.
type Diff struct {
	Base, Head Arm
	// Frames is every function that cost anything in either arm, by
	// Score, the most grown first and the most shrunk last (ties by
	// name).
	Frames []Frame
	// Tested is how many frames the rule tested (m); ZCritical the
	// threshold it held each to, Alpha/2m two-sided; 0 when untested.
	Tested    int
	Alpha     float64
	ZCritical float64
}

// Grew is the frames listed as grown, the most first; Shrank those
// listed as shrunk, the most first.
func (d *Diff) Grew() []Frame   { return d.listed(Grew) }
func (d *Diff) Shrank() []Frame { return reversed(d.listed(Shrank)) }

func (d *Diff) listed(v string) []Frame {
	var out []Frame
	for _, f := range d.Frames {
		if f.Verdict == v {
			out = append(out, f)
		}
	}
	return out
}

func reversed(fs []Frame) []Frame { slices.Reverse(fs); return fs }

// Compare ranks every function by the growth of its cost per message
// from base to head, and tests each against the blocks' spread at the
// family-wise level alpha (DefaultAlpha when 0): the package comment's
// rule. It needs a block in each arm; with fewer than two in either, the
// frames are ranked and Untested.
func Compare(base, head []Block, alpha float64) (*Diff, error) {
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	if !(alpha > 0 && alpha < 1) {
		return nil, fmt.Errorf("alpha %v is not in (0, 1)", alpha)
	}
	if len(base) == 0 || len(head) == 0 {
		return nil, errors.New("a comparison needs a profiled block in each arm")
	}
	b, err := armCosts(base)
	if err != nil {
		return nil, fmt.Errorf("base: %w", err)
	}
	h, err := armCosts(head)
	if err != nil {
		return nil, fmt.Errorf("head: %w", err)
	}
	d := &Diff{Base: b.arm, Head: h.arm, Alpha: alpha}
	names := map[string]bool{}
	for _, a := range []*armData{b, h} {
		for _, c := range a.costs {
			for f := range c {
				names[f] = true
			}
		}
	}
	for f := range names {
		fr := Frame{Function: f, ChangePct: math.NaN(), Verdict: Untested}
		fr.BaseSelf, fr.BaseTotal, fr.BaseSamples = b.means(f)
		fr.HeadSelf, fr.HeadTotal, fr.HeadSamples = h.means(f)
		fr.Change = fr.HeadTotal - fr.BaseTotal
		if fr.BaseTotal > 0 {
			fr.ChangePct = 100 * fr.Change / fr.BaseTotal
		}
		if m := max(fr.BaseTotal, fr.HeadTotal); m > 0 {
			fr.Score = fr.Change * math.Abs(fr.Change) / m
		}
		d.Frames = append(d.Frames, fr)
	}
	slices.SortFunc(d.Frames, func(x, y Frame) int {
		return cmp.Or(cmp.Compare(y.Score, x.Score), cmp.Compare(y.Change, x.Change), cmp.Compare(x.Function, y.Function))
	})
	if len(base) < 2 || len(head) < 2 {
		return d, nil
	}
	for _, f := range d.Frames {
		if f.BaseSamples+f.HeadSamples > 0 {
			d.Tested++
		}
	}
	if d.Tested == 0 {
		return d, nil
	}
	d.ZCritical = math.Sqrt2 * math.Erfinv(1-alpha/float64(d.Tested))
	sb, sh := b.sharedVar(), h.sharedVar()
	for i := range d.Frames {
		f := &d.Frames[i]
		if f.BaseSamples+f.HeadSamples == 0 {
			continue
		}
		// Counting noise as the null hypothesis has it: both arms at the
		// frame's mean cost over the two.
		pooled := (f.BaseTotal + f.HeadTotal) / 2
		yb, vb, lob, hib := b.logStats(f.Function, sb, pooled)
		yh, vh, loh, hih := h.logStats(f.Function, sh, pooled)
		se := math.Sqrt(vb/float64(b.arm.Blocks) + vh/float64(h.arm.Blocks))
		f.Z = (yh - yb) / se
		floor := MinSharePct / 100 * d.Base.NsPerMessage
		f.Detectable = max(floor, f.BaseTotal*math.Expm1(d.ZCritical*se))
		material := math.Abs(f.Change) >= floor
		switch {
		case f.Z > d.ZCritical && loh > hib && material:
			f.Verdict = Grew
		case f.Z < -d.ZCritical && hih < lob && material:
			f.Verdict = Shrank
		default:
			f.Verdict = WithinNoise
		}
	}
	return d, nil
}

// armData is one arm's blocks as costs.
type armData struct {
	arm    Arm
	costs  []map[string]FrameCost
	blocks []Block
}

func armCosts(blocks []Block) (*armData, error) {
	a := &armData{blocks: blocks}
	a.arm.Blocks = len(blocks)
	var ns float64
	for i, bl := range blocks {
		c, total, err := Costs(bl)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", i+1, err)
		}
		a.costs = append(a.costs, c)
		a.arm.Samples += bl.Profile.Samples
		a.arm.Unsymbolised += bl.Profile.Unsymbolised
		a.arm.Messages += bl.Messages
		a.arm.NsPerMessage += total / float64(len(blocks))
		ns += float64(bl.Profile.Ns)
	}
	a.arm.NsPerSample = ns / float64(a.arm.Samples)
	return a, nil
}

// means is f's mean self and total cost per message over the arm's
// blocks, and its samples.
func (a *armData) means(f string) (self, total float64, samples int64) {
	for _, c := range a.costs {
		self += c[f].Self
		total += c[f].Total
		samples += c[f].Samples
	}
	k := float64(len(a.costs))
	return self / k, total / k, samples
}

// logCosts is f's log cost in each block, with half a sample added
// (an absent frame costs half a sample, not log 0), its counting
// variance in each, and the range of its linear costs.
func (a *armData) logCosts(f string) (ys, countVar []float64, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i, c := range a.costs {
		fc := c[f]
		half := 0.5 * a.blocks[i].nsPerSample() / a.blocks[i].Messages
		ys = append(ys, math.Log(fc.Total+half))
		countVar = append(countVar, 1/(float64(fc.Samples)+0.5))
		lo, hi = min(lo, fc.Total), max(hi, fc.Total)
	}
	return ys, countVar, lo, hi
}

// logStats is f's mean log cost in the arm, the variance the rule gives
// it (the larger of its own and the arm's model: the shared variance
// plus the counting variance of the samples a block would hold at cost
// pooled per message), and its range.
func (a *armData) logStats(f string, shared, pooled float64) (mean, v, lo, hi float64) {
	ys, _, lo, hi := a.logCosts(f)
	mean, own := meanVar(ys)
	var count float64
	for _, bl := range a.blocks {
		count += 1 / (pooled*bl.Messages/bl.nsPerSample() + 0.5)
	}
	count /= float64(len(a.blocks))
	return mean, max(own, shared+count), lo, hi
}

// sharedVar is the arm's block-to-block variance of a frame's log cost
// beyond counting noise: the median, over the frames with at least
// minModelSamples samples a block on average, of their variance less
// their counting variance (0 when none qualifies, or with one block).
func (a *armData) sharedVar() float64 {
	if len(a.costs) < 2 {
		return 0
	}
	samples := map[string]int64{}
	for _, c := range a.costs {
		for f, fc := range c {
			samples[f] += fc.Samples
		}
	}
	var excess []float64
	for f, n := range samples {
		if float64(n)/float64(len(a.costs)) < minModelSamples {
			continue
		}
		ys, cv, _, _ := a.logCosts(f)
		_, v := meanVar(ys)
		count, _ := meanVar(cv)
		excess = append(excess, max(0, v-count))
	}
	if len(excess) == 0 {
		return 0
	}
	slices.Sort(excess)
	n := len(excess)
	if n%2 == 1 {
		return excess[n/2]
	}
	return (excess[n/2-1] + excess[n/2]) / 2
}

// meanVar is xs' mean and sample variance (0 for one value).
func meanVar(xs []float64) (mean, v float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	for _, x := range xs {
		v += (x - mean) * (x - mean)
	}
	return mean, v / float64(len(xs)-1)
}

package harness

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/harness/duet"
	"github.com/ceiling-bench/ceiling/harness/progress"
	"github.com/ceiling-bench/ceiling/harness/schedule"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/result"
)

// blockRun runs a two-arm sweep's steps: a block's two points (one
// after the other, or in a duet at once, each on its half), or the boots
// and stops of warm arms, and reports what each did as the schedule
// reads it.
type blockRun struct {
	ctx     context.Context
	o       *Plan
	runner  TwoArmRunner
	r       *result.Result
	w       io.Writer
	th      verdict.Thresholds
	s       *schedule.TwoArm
	halves  []*duet.Half
	elapsed func() time.Duration
	// refused is a point whose preflight was refused: the sweep stops.
	refused *result.Point
	// diff is the profiled blocks' differential profile, or why there
	// is none; nil: none was asked.
	diff *result.ProfileDiff
}

// spec is the PointSpec of block point pt at index i.
func (b *blockRun) spec(i int, pt schedule.Point, st schedule.Step) PointSpec {
	return PointSpec{Index: i, Role: pt.Role, Key: pt.Key, Arm: pt.Arm, Duration: st.Window.Duration, Warmup: st.Window.Warmup, Warm: st.Warm,
		Profile: pt.Role == result.RoleProfile}
}

// load is a point's warm-up and window in step st.
func (b *blockRun) load(st schedule.Step) time.Duration {
	if st.Window.Duration > 0 {
		return st.Window.Load()
	}
	return b.o.Point.Warmup + b.o.Point.Duration
}

// block runs st's two points and reports them; a lost point is in the
// report as lost, and a refused one ends the sweep.
func (b *blockRun) block(st schedule.Step) schedule.Report {
	pts := st.Block
	var outs [2]verdict.Outcome
	var ps [2]result.Point
	var oks [2]bool
	if b.halves == nil {
		for k, pt := range pts {
			if k == 1 && b.ctx.Err() != nil {
				return schedule.Report{}
			}
			i := len(b.r.Curve) + 1
			progress.TwoArmPoint(b.w, i, pt, "", b.s.Progress(), b.elapsed())
			outs[k] = b.runner.RunPoint(b.ctx, b.spec(i, pt, st))
			ps[k], oks[k] = b.admit(i, pt, outs[k], nil)
			if oks[k] && outs[k].Refused {
				b.refused = &ps[k] // its partner would be refused too
				return schedule.Report{}
			}
		}
	} else {
		gate := duet.NewGate()
		i := len(b.r.Curve) + 1
		specs := [2]PointSpec{b.spec(i, pts[0], st), b.spec(i+1, pts[1], st)}
		var wg sync.WaitGroup
		for k := range specs {
			specs[k].Half, specs[k].Gate = b.halves[k], gate
			progress.TwoArmPoint(b.w, i+k, pts[k], b.halves[k].Name, b.s.Progress(), b.elapsed())
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[k] = b.runner.RunPoint(b.ctx, specs[k])
			}()
		}
		wg.Wait()
		ps[0], oks[0] = b.admit(i, pts[0], outs[0], b.halves[0])
		ps[1], oks[1] = b.admit(len(b.r.Curve)+1, pts[1], outs[1], b.halves[1])
		for k := range outs {
			if oks[k] && outs[k].Refused && b.refused == nil {
				b.refused = &ps[k]
			}
		}
	}
	if b.ctx.Err() != nil || b.refused != nil {
		return schedule.Report{}
	}
	var rep schedule.Report
	if pts[0].Role == result.RoleCompare {
		// The verdict so far: what the profiled blocks ask after.
		b.r.Summarize()
		if c := b.r.Comparison; c != nil {
			rep.Verdict = c.Headline.Verdict
		}
	}
	at := b.elapsed()
	for k, pt := range pts {
		ob := observeSearch(pt, ps[k], outs[k], oks[k], b.r.Headline)
		ob.Elapsed, ob.Wall, ob.Load = at, outs[k].Wall, b.load(st)
		ob.ReadyCost, ob.StopCost, ob.ArmDown = outs[k].ReadyCost, outs[k].StopCost, outs[k].ArmDown
		ob.Series = seriesOf(outs[k])
		rep.Points = append(rep.Points, ob)
	}
	return rep
}

// admit puts a point's outcome in the curve, with its duet half and its
// search step.
func (b *blockRun) admit(i int, pt schedule.Point, out verdict.Outcome, half *duet.Half) (result.Point, bool) {
	r := b.r
	p, ok := admit(r, i, pt.Role, pt.Key, pt.Arm, out, b.th)
	if !ok {
		return p, false
	}
	last := &r.Curve[len(r.Curve)-1]
	if half != nil {
		p.Half, last.Half = half.Name, half.Name
	}
	if pt.Step > 0 { // a search point (COMPARE_SCOPE=headline's first pass)
		p.SearchStep, p.SearchPhase, p.SearchReason = pt.Step, pt.Phase, pt.Reason
		*last = p
	}
	if p.Status != result.StatusOK {
		progress.Failed(b.w, i, 0, pt.Arm, p.FailReason)
	}
	return p, true
}

// arms boots or stops st's arms, both at once, and reports each one's
// time; a failure goes in the result's warnings with its log's tail.
func (b *blockRun) arms(st schedule.Step) schedule.Report {
	progress.TwoArmArms(b.w, st, b.s.Progress(), b.elapsed())
	outs := make([]ArmOutcome, len(st.Arms))
	var wg sync.WaitGroup
	for k, arm := range st.Arms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st.Kind == schedule.BootArms {
				outs[k] = b.runner.BootArm(b.ctx, arm)
			} else {
				outs[k] = b.runner.StopArm(b.ctx, arm)
			}
		}()
	}
	wg.Wait()
	var rep schedule.Report
	for k, arm := range st.Arms {
		out := outs[k]
		rep.Arms = append(rep.Arms, schedule.ArmEvent{Arm: arm, Cost: out.Cost, Failed: out.FailReason})
		what := "boot"
		if st.Kind == schedule.StopArms {
			what = "stop"
		}
		if out.FailReason != "" && b.ctx.Err() == nil {
			w := fmt.Sprintf("warm arms: the %s's %s failed: %s", arm, what, out.FailReason)
			if tail := strings.TrimSpace(out.LogTail); tail != "" {
				w += "; its log ends: " + lastLine(tail)
			}
			b.r.Warn(w)
		}
		if len(out.Escalated) > 0 {
			b.r.Warn(fmt.Sprintf("warm arms: the %s's %s did not exit within its grace after SIGTERM and was SIGKILLed", arm, strings.Join(out.Escalated, " and ")))
		}
		if w := (result.Point{Escaped: out.Escaped}).EscapedWarning(); w != "" {
			b.r.Warn(w)
		}
	}
	return rep
}

// lastLine is the last line of s.
func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// seriesOf is a point's timeline as the schedule reads it; nil when its
// generator kept none.
func seriesOf(out verdict.Outcome) *schedule.Series {
	if out.Load == nil || out.Load.Summary.Timeline == nil {
		return nil
	}
	tl := out.Load.Summary.Timeline
	return &schedule.Series{Tick: time.Duration(tl.TickNs), Start: tl.StartTick, End: tl.EndTick, Counts: tl.Counts}
}

// profile builds the differential profile of the profiled blocks'
// points, its files beside out (OUT-profile/), or says why there is none
// when the verdict asked for them and they did not fit (why).
func (b *blockRun) profile(out, why string) {
	var pts []result.Point
	for _, p := range b.r.Curve {
		if p.Role == result.RoleProfile {
			pts = append(pts, p)
		}
	}
	switch {
	case len(pts) > 0:
		dir := strings.TrimSuffix(out, filepath.Ext(out)) + "-profile"
		b.diff = b.runner.ProfileDiff(b.ctx, pts, dir, filepath.Dir(out))
	case why != "":
		b.diff = &result.ProfileDiff{Reason: why}
	}
}

package harness

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
)

// scripted is a PointRunner that replays given throughputs (0: fail) and
// records what it was asked; it tests Sweep's bookkeeping, not a server.
type scripted struct {
	thr    map[result.PointKey]float64
	asked  []PointSpec
	cancel func() // called after the point at cancelAt, if set
	at     int
}

func (s *scripted) RunPoint(ctx context.Context, spec PointSpec) verdict.Outcome {
	s.asked = append(s.asked, spec)
	defer func() {
		if s.cancel != nil && len(s.asked) == s.at {
			s.cancel()
		}
	}()
	k := spec.Key
	k.Rep = 0
	v := s.thr[k]
	if v == 0 {
		return verdict.Outcome{FailReason: "server exited during the point", LogTail: "boom"}
	}
	srv := result.CPUStats{Samples: 4, MeanCores: 0.95, PinnedCores: 1, FractionMean: 0.95}
	gen := result.CPUStats{Samples: 4, MeanCores: 0.5, PinnedCores: 1, FractionMean: 0.5}
	return verdict.Outcome{Load: &load.Result{Summary: load.Summary{Mode: "closed", ThroughputPerS: v, MeasuredNs: 1e9}}, ServerCPU: srv, GeneratorCPU: gen}
}

func sweepOpts(t *testing.T) *Plan {
	t.Helper()
	o := knob.DefaultOptions(false)
	o.BatchLadder, o.ConnsLadders = knob.Ladder{10, 100}, knob.ConnsLadders{10: {4, 8}, 100: {2}}
	p, err := ResolveKnobs(o, pinning.CPUSet{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSweepRepeatsTheHeadlinePeak(t *testing.T) {
	k := func(b, c int) result.PointKey { return result.PointKey{Batch: b, Connections: c} }
	run := &scripted{thr: map[result.PointKey]float64{k(10, 4): 100, k(10, 8): 180, k(100, 2): 50}}
	r := &result.Result{}
	var progress bytes.Buffer
	if err := Sweep(context.Background(), sweepOpts(t), run, r, &progress, verdict.DefaultThresholds, newFakeClock(0)); err != nil {
		t.Fatal(err)
	}
	var got []result.PointKey
	for _, s := range run.asked {
		got = append(got, s.Key)
	}
	want := []result.PointKey{k(10, 4), k(100, 2), k(10, 8), {Batch: 10, Connections: 8, Rep: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("points run (-want +got):\n%s", diff)
	}
	if last := run.asked[3]; last.Role != result.RoleAARepeat || last.Index != 4 {
		t.Errorf("last point %+v, want the A-A repeat as point 4", last)
	}
	if r.Headline.ThroughputPerS != 180 || r.NoiseFloorPct == nil || *r.NoiseFloorPct != 0 {
		t.Errorf("headline %+v, noise %v", r.Headline, r.NoiseFloorPct)
	}
	if !strings.HasPrefix(progress.String(), "plan: 4 points (3 on the ladder, 1 A-A repeat): ") {
		t.Errorf("the progress does not open with the plan:\n%s", progress.String())
	}
	if !strings.Contains(progress.String(), "point 4/4: batch 10, 8 connections, rep 1 (A-A repeat)") {
		t.Errorf("progress:\n%s", progress.String())
	}
}

func TestSweepFailedPointsGoOn(t *testing.T) {
	run := &scripted{thr: map[result.PointKey]float64{{Batch: 100, Connections: 2}: 50}}
	r := &result.Result{}
	var progress bytes.Buffer
	err := Sweep(context.Background(), sweepOpts(t), run, r, &progress, verdict.DefaultThresholds, newFakeClock(0))
	if !errors.Is(err, ErrNoCleanHeadline) {
		t.Fatalf("error %v, want ErrNoCleanHeadline", err)
	}
	if len(r.Curve) != 3 || r.Curve[0].Status != result.StatusFailed || r.Curve[0].LogTail != "boom" || r.Curve[1].Status != result.StatusOK {
		t.Errorf("curve %+v", r.Curve)
	}
	if !strings.Contains(progress.String(), "point 1/4 failed: server exited") {
		t.Errorf("progress does not report the failure:\n%s", progress.String())
	}
}

func TestSweepInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	run := &scripted{thr: map[result.PointKey]float64{{Batch: 10, Connections: 4}: 100, {Batch: 100, Connections: 2}: 50, {Batch: 10, Connections: 8}: 70},
		cancel: func() { cancel(errors.New("interrupt")) }, at: 2}
	r := &result.Result{}
	err := Sweep(ctx, sweepOpts(t), run, r, &bytes.Buffer{}, verdict.DefaultThresholds, newFakeClock(0))
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("error %v, want ErrInterrupted", err)
	}
	if len(run.asked) != 2 || len(r.Curve) != 2 {
		t.Errorf("ran %d points, curve %d: want the sweep to stop after 2", len(run.asked), len(r.Curve))
	}
	if !r.Partial || !strings.Contains(r.PartialReason, "interrupted after 2 of 4 points: interrupt") {
		t.Errorf("partial %v %q", r.Partial, r.PartialReason)
	}
	if r.NoiseFloorPct != nil || !r.Headline.Clean {
		t.Errorf("headline %+v noise %v: the partial curve still has its ceiling, no repeat", r.Headline, r.NoiseFloorPct)
	}
}

// refusing is a PointRunner whose every point's preflight is refused as
// every point's would be (a wrong secret): its reason is long, and its
// hint is at the end.
type refusing struct{ asked int }

const refusedWhy = "the generator's preflight was refused, as it would be at every point: "

func (r *refusing) BootArm(context.Context, string) ArmOutcome { return ArmOutcome{} }
func (r *refusing) StopArm(context.Context, string) ArmOutcome { return ArmOutcome{} }
func (r *refusing) ProfileDiff(context.Context, []result.Point, string, string) *result.ProfileDiff {
	return nil
}
func (r *refusing) ProfileUnable() string { return "" }

func (r *refusing) RunPoint(context.Context, PointSpec) verdict.Outcome {
	r.asked++
	return verdict.Outcome{FailReason: refusedWhy + strings.Repeat("x", 400) + " are the --url servers nodes of one cluster?", Refused: true}
}

// TestSweepStopsAtARefusal is issue 33's fail-fast: a refusal every point
// would meet stops both sweeps after the first point, with ErrRefused, a
// partial result that says why in full, and no second boot.
func TestSweepStopsAtARefusal(t *testing.T) {
	for _, two := range []bool{false, true} {
		run, r := &refusing{}, &result.Result{}
		var err error
		if two {
			err = SweepTwoArm(context.Background(), twoArmOpts(t), run, r, io.Discard, verdict.DefaultThresholds, nil)
		} else {
			err = Sweep(context.Background(), sweepOpts(t), run, r, io.Discard, verdict.DefaultThresholds, newFakeClock(0))
		}
		if !errors.Is(err, ErrRefused) || run.asked != 1 || len(r.Curve) != 1 {
			t.Fatalf("two-arm %v: err %v, %d points asked, %d in the curve; want ErrRefused after 1", two, err, run.asked, len(r.Curve))
		}
		if !r.Partial || !strings.HasPrefix(r.PartialReason, "stopped after point 1: "+refusedWhy) || !strings.HasSuffix(r.PartialReason, "one cluster?") {
			t.Errorf("two-arm %v: partial %v, reason %q", two, r.Partial, r.PartialReason)
		}
	}
}

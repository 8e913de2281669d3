package cpuprof

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/ceiling-bench/ceiling/internal/profdiff"
	"github.com/ceiling-bench/ceiling/result"
)

// Files Diff writes in its directory.
const (
	BaseFolded = "base.folded"
	HeadFolded = "head.folded"
	FlameGraph = "flamegraph.svg"
)

// MinCoverage is the least share of the servers' measured CPU a point's
// samples must account for to count.
const MinCoverage = 0.5

// maxOthers bounds the frames within the noise that Diff lists after
// the grown and shrunk ones.
const maxOthers = 10

// DiffInput is what Diff needs of a two-arm sweep.
type DiffInput struct {
	// Points are the profiled points of both arms (their Arm and
	// CPUProfile set); points without a profile are named in the notes.
	Points []result.Point
	// Dir is where the folded stacks and the flame graph are written
	// (made if missing); RelTo the result document's directory, which the
	// files are recorded relative to ("": as written).
	Dir, RelTo string
	Title      string
}

// Rule is ProfileDiff.Rule: internal/profdiff's rule, in words.
const Rule = "a frame is listed as grown (shrunk) when every head point's cost per message is above (below) every base point's, the arms' mean log costs differ by more than z_critical standard errors (Bonferroni over the frames tested, at alpha for the whole list; each frame's variance the larger of its own over the points and a model of counting noise plus the spread the frames share), and the change is at least 1% of the base's whole CPU per message"

// Diff compares the profiled points of both arms per message handled:
// the result's comparison.headline.profile_diff, or one whose Reason
// says why there is none. It never fails the sweep.
func (p *Profiler) Diff(ctx context.Context, in DiffInput) *result.ProfileDiff {
	d := &result.ProfileDiff{Unit: "cpu_ns_per_message"}
	arms := map[string][]profdiff.Block{}
	idx := map[string][]int{}
	tools := map[string]bool{}
	for _, pt := range in.Points {
		cp := pt.CPUProfile
		switch {
		case pt.Arm != result.ArmBase && pt.Arm != result.ArmHead:
			continue
		case cp == nil:
			continue
		case cp.Reason != "":
			d.Notes = append(d.Notes, fmt.Sprintf("point %d (%s): no profile: %s", pt.Index, pt.Arm, cp.Reason))
			continue
		case pt.Status != result.StatusOK:
			d.Notes = append(d.Notes, fmt.Sprintf("point %d (%s) failed: its profile has no message count", pt.Index, pt.Arm))
			continue
		}
		prof, err := p.usable(ctx, pt)
		if err != nil {
			d.Notes = append(d.Notes, fmt.Sprintf("point %d (%s): %v", pt.Index, pt.Arm, err))
			continue
		}
		tools[cp.Tool] = true
		arms[pt.Arm] = append(arms[pt.Arm], profdiff.Block{Profile: prof, Messages: cp.Messages})
		idx[pt.Arm] = append(idx[pt.Arm], pt.Index)
	}
	for _, arm := range []string{result.ArmBase, result.ArmHead} {
		if len(arms[arm]) == 0 {
			d.Reason = fmt.Sprintf("no profile of the %s arm", arm)
			if len(d.Notes) > 0 {
				d.Reason += ": " + d.Notes[0]
			}
			return d
		}
	}
	if len(tools) > 1 {
		d.Reason = "the arms were profiled by different tools (perf and pprof): their costs do not compare"
		return d
	}
	for t := range tools {
		d.Tool = t
	}
	pd, err := profdiff.Compare(arms[result.ArmBase], arms[result.ArmHead], profdiff.DefaultAlpha)
	if err != nil {
		d.Reason = "the profiles do not compare: " + err.Error()
		return d
	}
	d.Rule, d.Alpha, d.ZCritical, d.Tested = Rule, pd.Alpha, pd.ZCritical, pd.Tested
	if pd.Tested == 0 {
		d.Notes = append(d.Notes, "one profiled point in an arm: no spread to test a frame against, the frames are ranked and untested")
	}
	d.Base = armOf(pd.Base, idx[result.ArmBase])
	d.Head = armOf(pd.Head, idx[result.ArmHead])
	for _, a := range []*result.ProfileArm{d.Base, d.Head} {
		if a.Samples > 0 && a.Unsymbolised*10 > a.Samples {
			d.Notes = append(d.Notes, fmt.Sprintf("%d of %d samples had no symbol (a stripped binary, or JIT code without a perf map: Node wants --perf-basic-prof)", a.Unsymbolised, a.Samples))
		}
	}
	d.Frames = frames(pd)
	if err := p.write(in, d, arms); err != nil {
		d.Notes = append(d.Notes, "files: "+err.Error())
	}
	return d
}

// usable is a profiled point's recording, read, or why it cannot be
// compared: no sample, no message handled, or too few samples for the
// CPU its servers used.
func (p *Profiler) usable(ctx context.Context, pt result.Point) (*profdiff.Profile, error) {
	cp := pt.CPUProfile
	prof, err := p.read(ctx, cp)
	switch {
	case err != nil:
		return nil, err
	case prof.Samples == 0:
		return nil, fmt.Errorf("its profile holds no sample")
	case !(cp.Messages > 0):
		return nil, fmt.Errorf("it handled no message while profiled")
	case pt.ServerCPU.MeanCores > 0 && cp.DurationNs > 0:
		// perf loses samples when it cannot drain its ring in time (a
		// starved perf): the samples must account for most of the CPU
		// the harness measured the servers use.
		used := pt.ServerCPU.MeanCores * float64(cp.DurationNs)
		if cover := float64(prof.Ns) / used; cover < MinCoverage {
			return nil, fmt.Errorf("its samples account for %.0f%% of the CPU its servers used (perf lost samples): left out", 100*cover)
		}
	}
	return prof, nil
}

// read parses a point's recording.
func (p *Profiler) read(ctx context.Context, cp *result.CPUProfile) (*profdiff.Profile, error) {
	if cp.Tool == result.ProfilerPprof {
		b, err := os.ReadFile(cp.File)
		if err != nil {
			return nil, err
		}
		return profdiff.ParsePprof(b)
	}
	perf := p.Plan().Perf
	if perf == "" {
		perf = "perf"
	}
	if len(cp.Pids) == 0 {
		return nil, fmt.Errorf("its profile names no server process")
	}
	out, err := p.env.Script(ctx, perf, cp.File, cp.Pids)
	if err != nil {
		return nil, err
	}
	return profdiff.ParsePerfScript(bytes.NewReader(out))
}

func armOf(a profdiff.Arm, points []int) *result.ProfileArm {
	return &result.ProfileArm{Points: points, Samples: a.Samples, Unsymbolised: a.Unsymbolised, Messages: a.Messages,
		CPUNsPerMessage: a.NsPerMessage, NsPerSample: a.NsPerSample}
}

// frames are the grown (the most first), the shrunk (the most first),
// then the largest movers within the noise, each list bounded.
func frames(pd *profdiff.Diff) []result.ProfileFrame {
	var out []result.ProfileFrame
	add := func(fs []profdiff.Frame, n int) {
		for i, f := range fs {
			if i == n {
				break
			}
			out = append(out, frameOf(f))
		}
	}
	add(pd.Grew(), result.MaxProfileFrames)
	add(pd.Shrank(), result.MaxProfileFrames)
	var rest []profdiff.Frame
	for _, f := range pd.Frames {
		if f.Verdict == profdiff.WithinNoise || f.Verdict == profdiff.Untested {
			rest = append(rest, f)
		}
	}
	slices.SortStableFunc(rest, func(x, y profdiff.Frame) int { return cmp.Compare(math.Abs(y.Score), math.Abs(x.Score)) })
	add(rest, maxOthers)
	return out
}

func frameOf(f profdiff.Frame) result.ProfileFrame {
	r := result.ProfileFrame{Function: f.Function, BaseNs: f.BaseTotal, HeadNs: f.HeadTotal, ChangeNs: f.Change,
		BaseSelfNs: f.BaseSelf, HeadSelfNs: f.HeadSelf, Verdict: f.Verdict, Z: f.Z, DetectableNs: f.Detectable,
		BaseSamples: f.BaseSamples, HeadSamples: f.HeadSamples}
	if !math.IsNaN(f.ChangePct) {
		pct := f.ChangePct
		r.ChangePct = &pct
	}
	if math.IsInf(r.Z, 0) || math.IsNaN(r.Z) {
		r.Z = 0
	}
	return r
}

// write writes each arm's folded stacks and the flame graph into in.Dir
// and records their paths.
func (p *Profiler) write(in DiffInput, d *result.ProfileDiff, arms map[string][]profdiff.Block) error {
	if err := os.MkdirAll(in.Dir, 0o755); err != nil {
		return err
	}
	merged := map[string]*profdiff.Profile{}
	for arm, blocks := range arms {
		m := profdiff.NewProfile()
		for _, b := range blocks {
			m.Merge(b.Profile)
		}
		merged[arm] = m
	}
	rel := func(path string) string {
		if in.RelTo == "" {
			return path
		}
		if r, err := filepath.Rel(in.RelTo, path); err == nil {
			return r
		}
		return path
	}
	for arm, name := range map[string]string{result.ArmBase: BaseFolded, result.ArmHead: HeadFolded} {
		var b bytes.Buffer
		if err := profdiff.WriteFolded(&b, merged[arm]); err != nil {
			return err
		}
		path := filepath.Join(in.Dir, name)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			return err
		}
		if arm == result.ArmBase {
			d.Base.FoldedFile = rel(path)
		} else {
			d.Head.FoldedFile = rel(path)
		}
	}
	svg, err := profdiff.FlameGraph(profdiff.FlameInput{
		Base: merged[result.ArmBase], Head: merged[result.ArmHead],
		BaseScale: d.Base.NsPerSample / d.Base.Messages, HeadScale: d.Head.NsPerSample / d.Head.Messages,
		Title: in.Title,
	})
	if err != nil {
		return err
	}
	path := filepath.Join(in.Dir, FlameGraph)
	if err := os.WriteFile(path, svg, 0o644); err != nil {
		return err
	}
	d.FlamegraphFile = rel(path)
	return nil
}

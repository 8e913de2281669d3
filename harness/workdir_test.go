package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/supervise/supervisetest"
	"github.com/ceiling-bench/ceiling/result"
)

// A second run in the same work dir whose generator writes its marker
// and no JSON fails every point: it never reads the first run's
// load.json back (issue 8, item 2; the end-to-end lane ran it with real
// generators until issue 48).
func TestPipelineReusedWorkDirIsFresh(t *testing.T) {
	work := t.TempDir()
	plan := func() *Plan {
		return pipelinePlan(t, "", func(o *knob.Options) { o.WorkDir, o.Reps = work, 1 })
	}
	first := runPipeline(t, plan(), &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){
		"generator": measuringGenerator(50_000),
	}}, newRecordedMeter(t), newFakeClock(0))
	old, _ := filepath.Glob(filepath.Join(work, "point-001-*", "load.json"))
	if len(old) != 1 || first.r.Curve[0].Status != result.StatusOK {
		t.Fatalf("the first run left no load.json to be stale (%v, %+v)", old, first.r.Curve)
	}
	second := runPipeline(t, plan(), &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){
		"generator": func(spec supervise.Spec, p *supervisetest.Proc) {
			_ = os.WriteFile(argAfter(spec.Args, "--measure-marker"), nil, 0o644)
			p.Exit(nil)
		},
	}}, newRecordedMeter(t), newFakeClock(0))
	r := second.r
	if len(r.Curve) != 1 || r.Curve[0].Status != result.StatusFailed || !strings.HasPrefix(r.Curve[0].FailReason, "generator result: no JSON written") {
		t.Errorf("curve %+v, want the point failed: generator result: no JSON written", r.Curve)
	}
	if r.Headline.Clean || r.Curve[0].ThroughputPerS != 0 {
		t.Errorf("an old figure came back: headline %+v", r.Headline)
	}
}

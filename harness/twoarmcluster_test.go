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

// Two clusterings of one server compared (seed 003), through the real
// point runner with fake processes: the base and the head are each a
// target of two servers, every point of an arm boots and stops both of
// its arm's, and the head, half as fast, is called slower (each server's
// CPU, listed per point, is meter.Sides', TestSidesEachServer). The end-to-end lane ran this with two 4-server refserver
// clusters until issue 48 (TestTwoArmClusterings, 97 s); the clusters'
// own path is its fault and NATS sweeps', the two-arm sweep's its
// planted-spin and warm-arm sweeps'.
func TestPipelineTwoArmClusterings(t *testing.T) {
	cluster := func(path string) string {
		return `{"name": "cluster` + strings.ReplaceAll(path, "/", "-") + `", "echo_url": "ws://{host}:{port}` + path + `", "servers": [
			{"name": "node1", "command": ["/bin/true", "{port}"], "ready": "tcp:{host}:{port}"},
			{"name": "node2", "command": ["/bin/true", "{port2}"], "ready": "tcp:{host}:{port2}"}]}`
	}
	plan := pipelinePlan(t, cluster("/slow"), func(o *knob.Options) {
		o.BaseTargetFile = filepath.Join(t.TempDir(), "base.json")
		if err := os.WriteFile(o.BaseTargetFile, []byte(cluster("/echo")), 0o600); err != nil {
			t.Fatal(err)
		}
		o.SetTwoArmDefaults(result.ScopeHeadline)
		o.CompareArms, o.CompareBudget = result.ArmsFresh, 0
		o.CompareReps, o.CompareStop = 6, result.StopFixed
		// A slower head is profiled after its verdict by default, with
		// the machine's own perf: not here.
		o.CompareProfile = knob.ProfileOff
	})
	st := &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){
		"server node1": func(_ supervise.Spec, p *supervisetest.Proc) { p.Log("node1: up") },
		"server node2": func(_ supervise.Spec, p *supervisetest.Proc) { p.Log("node2: up") },
		"generator": func(spec supervise.Spec, p *supervisetest.Proc) {
			thr := 50_000.0
			if strings.HasSuffix(argAfter(spec.Args, "--url"), "/slow") {
				thr = 25_000
			}
			measuringGenerator(thr)(spec, p)
		},
	}}
	res := runPipeline(t, plan, st, newRecordedMeter(t), newFakeClock(0))
	if res.err != nil {
		t.Fatalf("Run: %v\n%s", res.err, res.stderr)
	}
	r := res.r
	if r.Meta.Target.Name != "cluster-slow" || r.Meta.BaseTarget == nil || r.Meta.BaseTarget.Name != "cluster-echo" {
		t.Errorf("targets: head %q, base %+v", r.Meta.Target.Name, r.Meta.BaseTarget)
	}
	if r.Comparison == nil || r.Comparison.Headline.Verdict != result.CompareSlower {
		t.Fatalf("comparison %+v: want the head slower", r.Comparison)
	}
	for _, p := range r.Curve {
		if p.Status != result.StatusOK {
			t.Errorf("point %d (%s): %s %s", p.Index, p.Arm, p.Status, p.FailReason)
		}
	}
	if n1, n2 := len(st.named("server node1")), len(st.named("server node2")); n1 != len(r.Curve) || n2 != len(r.Curve) {
		t.Errorf("%d and %d nodes booted for %d points: want both of its arm's for each", n1, n2, len(r.Curve))
	}
	for _, s := range st.started {
		if s.Stops() == 0 {
			t.Errorf("%s was not stopped", s.Name())
		}
	}
}

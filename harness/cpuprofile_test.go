package harness

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/cpuprof"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/supervise/supervisetest"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/result"
)

// TestProfiledPointWithoutPerf: a point whose spec asks for a profile,
// on a machine where perf is missing or not permitted, is measured as
// any other; its record says that no profile was taken and why. A point
// that asks for none records nothing.
func TestProfiledPointWithoutPerf(t *testing.T) {
	for name, env := range map[string]cpuprof.Env{
		"perf missing": {LookPath: func(string) (string, error) { return "", errors.New("not found") }},
		"paranoid 3": {
			LookPath: func(string) (string, error) { return "/usr/bin/perf", nil },
			Euid:     func() int { return 1000 }, Paranoid: func() (int, error) { return 3, nil },
		},
	} {
		for _, profile := range []bool{true, false} {
			st := &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){
				"server":    func(_ supervise.Spec, p *supervisetest.Proc) { p.Log("listening") },
				"generator": measuringGenerator(50_000),
			}}
			plan := pipelinePlan(t, "", nil)
			pr, err := NewProcRunner(plan, agentside.Env{}, ProcOptions{Starter: st, Meter: newRecordedMeter(t), Clock: newFakeClock(0),
				Profiler: cpuprof.New(env)})
			if err != nil {
				t.Fatal(err)
			}
			k := result.PointKey{Batch: 10, Connections: 2, Rep: 1}
			out := pr.RunPoint(context.Background(), PointSpec{Index: 1, Role: result.RoleCompare, Key: k, Arm: result.ArmHead, Duration: time.Second, Profile: profile})
			p := verdict.Point(1, result.RoleCompare, k, out, verdict.DefaultThresholds)
			if p.Status != result.StatusOK || p.ThroughputPerS != 50_000 {
				t.Errorf("%s, profile %v: the point %s (%s)", name, profile, p.Status, p.FailReason)
			}
			switch {
			case !profile && p.CPUProfile != nil:
				t.Errorf("%s: a point that asked for no profile records %+v", name, p.CPUProfile)
			case profile && (p.CPUProfile == nil || p.CPUProfile.File != "" || !strings.Contains(p.CPUProfile.Reason, "perf is not")):
				t.Errorf("%s: the profiled point records %+v, want the reason", name, p.CPUProfile)
			}
		}
	}
}

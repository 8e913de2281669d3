package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/supervise/supervisetest"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// TestRunTimestampsInOrder: the run reads time from its Clock only. A
// whole two-arm sweep (warm arms: a first pass, then blocks) runs through
// Run over the real ProcRunner with the fake processes, window and a
// fake clock that moves on at every read, set days before this machine's
// date: every timestamp the result holds (each member named *_at, found
// by walking the document, so one added later is checked too) lies
// between meta.started_at and meta.finished_at, on the fake clock's day;
// the run ends after it starts; and each point starts after the one
// before it ended (curve[].started_at + wall_time_ns). A time read
// beside the Clock (the wall clock, or the generator's meta) is on
// another day, and fails here.
func TestRunTimestampsInOrder(t *testing.T) {
	st := &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){
		"server":    func(_ supervise.Spec, p *supervisetest.Proc) { p.Log("listening") },
		"generator": measuringGenerator(50_000),
	}}
	clock := newFakeClock(0)
	clock.step = time.Millisecond
	day := clock.Now()
	res := runPipeline(t, warmPlan(t), st, newRecordedMeter(t), clock)
	if res.err != nil {
		t.Fatalf("Run: %v\n%s", res.err, res.stderr)
	}
	r := res.r
	start, end := r.Meta.StartedAt, r.Meta.FinishedAt
	if !start.After(day) || !end.After(start) || end.Sub(day) > time.Hour {
		t.Fatalf("meta.started_at %v, finished_at %v: want both after the fake clock's %v, in order, within its hour", start, end, day)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	walkTimes(doc, "", func(path string, at time.Time) {
		n++
		if at.Before(start) || at.After(end) {
			t.Errorf("%s = %v: outside the run (%v to %v)", path, at, start, end)
		}
	})
	if n < 2+len(r.Curve) {
		t.Errorf("%d timestamps found, want the run's two and one per point (%d)", n, len(r.Curve))
	}
	if len(r.Curve) < 4 {
		t.Fatalf("%d points, want a first pass and blocks", len(r.Curve))
	}
	for i := 1; i < len(r.Curve); i++ {
		prev, p := r.Curve[i-1], r.Curve[i]
		if ended := prev.StartedAt.Add(time.Duration(prev.WallTimeNs)); !p.StartedAt.After(ended) {
			t.Errorf("point %d started at %v, before point %d ended (%v)", p.Index, p.StartedAt, prev.Index, ended)
		}
	}
}

// walkTimes calls f with every member of doc (a decoded JSON document)
// named *_at that holds an RFC 3339 time, and its path.
func walkTimes(doc any, path string, f func(string, time.Time)) {
	switch v := doc.(type) {
	case map[string]any:
		for k, c := range v {
			if s, ok := c.(string); ok && strings.HasSuffix(k, "_at") {
				at, err := time.Parse(time.RFC3339Nano, s)
				if err == nil {
					f(path+"."+k, at)
				}
				continue
			}
			walkTimes(c, path+"."+k, f)
		}
	case []any:
		for i, c := range v {
			walkTimes(c, path+"["+strconv.Itoa(i)+"]", f)
		}
	}
}

// TestTopLevelReadsTimeThroughClock: no file of the harness's top level
// reads the wall clock but seams.go's wallClock, the Clock a run gets by
// default: a deadline, an elapsed time or a timestamp read beside it
// would be the wall clock's under a test's fake one.
func TestTopLevelReadsTimeThroughClock(t *testing.T) {
	testenv.ReadsNoClock(t, "seams.go")
}

// TestPointPortsComeFromDeps: a point's ports are the ones Deps.FreePorts
// gave (a test may hand out its own), and the server's command and URL
// are expanded with them.
func TestPointPortsComeFromDeps(t *testing.T) {
	st := &fakeStarter{script: map[string]func(supervise.Spec, *supervisetest.Proc){
		"server":    func(_ supervise.Spec, p *supervisetest.Proc) { p.Log("listening") },
		"generator": measuringGenerator(50_000),
	}}
	var given []int
	d := fakeMachine(Deps{Starter: st, Meter: newRecordedMeter(t), Clock: newFakeClock(0),
		FreePorts: func(n int) ([]int, error) {
			ps, err := target.FreePortsN(n)
			given = append(given, ps...)
			return ps, err
		}})
	var stdout, stderr bytes.Buffer
	r, err := Run(context.Background(), pipelinePlan(t, "", nil), RunConfig{Version: "test", Stdout: &stdout, Stderr: &stderr,
		Getenv: func(string) string { return "" }, Thresholds: verdict.DefaultThresholds, Deps: d})
	if err != nil || r == nil || len(r.Curve) == 0 {
		t.Fatalf("Run: %v\n%s", err, stderr.String())
	}
	srvs := st.named("server")
	if len(given) < 2*len(r.Curve) || len(srvs) != len(r.Curve) {
		t.Fatalf("%d ports given for %d points, %d servers", len(given), len(r.Curve), len(srvs))
	}
	for i, spec := range st.specs {
		if spec.Name != "server" {
			continue
		}
		addr := strings.Join(spec.Args, " ")
		if !slices.ContainsFunc(given, func(p int) bool { return strings.Contains(addr, ":"+strconv.Itoa(p)) }) {
			t.Errorf("server %d's command %q names none of the ports given %v", i, spec.Args, given)
		}
	}
}

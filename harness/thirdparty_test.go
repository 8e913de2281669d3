//go:build e2e

package harness_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
)

// websocketdTarget is benchmark/targets/websocketd-echo.json as shipped.
// Without websocketd the test skips on a developer's machine but fails in
// CI (CI=true), whose .ci/run installs it: a missing binary there is a
// broken setup, not a reason to test less.
func websocketdTarget(t *testing.T) target.Spec {
	t.Helper()
	if _, err := exec.LookPath("websocketd"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("websocketd is not installed but CI=true (.ci/run installs it): %v", err)
		}
		t.Skipf("websocketd is not installed (apt-get install -y websocketd): %v", err)
	}
	tg, err := target.Load("../benchmark/targets/websocketd-echo.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.CheckRunnable("echo"); err != nil {
		t.Fatal(err)
	}
	return tg
}

// treeWatch records, while a sweep runs in this process, the websocketd
// servers among this test's descendants and the cat children each forked
// (one per connection). The sweep's result has CPU figures but no process
// count, so /proc is the only witness that the server was a tree.
type treeWatch struct {
	mu      sync.Mutex
	maxCats int                         // most cat children one websocketd had at once
	seen    map[supervise.ProcStat]bool // every websocketd and cat seen, to check none outlives the sweep
	end     func()                      // stops the watch (poll)
}

func watchTree(t *testing.T) *treeWatch {
	t.Helper()
	w := &treeWatch{seen: map[supervise.ProcStat]bool{}}
	w.end = poll(t, 50*time.Millisecond, w.look)
	return w
}

func (w *treeWatch) look() {
	pids, _ := supervise.Descendants(os.Getpid())
	cats := map[int]int{} // websocketd pid -> cat children
	var found []supervise.ProcStat
	for _, pid := range pids {
		st, err := supervise.ReadStat(pid)
		if err != nil {
			continue
		}
		switch comm(pid) {
		case "websocketd":
			found = append(found, st)
		case "cat":
			if comm(st.PPid) == "websocketd" {
				cats[st.PPid]++
				found = append(found, st)
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, st := range found {
		st.State = 0 // one key per process whatever its state
		w.seen[st] = true
	}
	for _, n := range cats {
		w.maxCats = max(w.maxCats, n)
	}
}

// comm is the process's command name, "" once it is gone.
func comm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// TestThirdPartyWebsocketd sweeps websocketd (a Debian-packaged server,
// not ours) through its target file: the harness must boot it from the
// file, measure it, sample its whole process tree (websocketd forks one
// cat per connection) and stop every process it started.
func TestThirdPartyWebsocketd(t *testing.T) {
	needProcs(t)
	tg := websocketdTarget(t)
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {4, 8}})
	o.Duration = time.Second

	w := watchTree(t)
	r, table, err := runSweepOnce(t, context.Background(), o, tg)
	w.end()
	// The subject is the third party's process tree: booted, measured,
	// sampled, stopped, which every point shows. Only a clean headline
	// has its A-A repeat (checked below when there is one; TestMiniSweep
	// holds the noise floor's rule).
	contended, err := contentionIsNotTheSubject(t, r, err)
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}

	if got, want := r.Meta.Target.Name, "websocketd-echo"; got != want {
		t.Errorf("meta.target.name %q, want %q", got, want)
	}
	// The result records the target as the file wrote it, placeholders
	// and all: each point filled in its own port.
	if diff := cmp.Diff([]string{"websocketd", "--port={port}", "--address={host}", "cat"}, r.Meta.Target.Command); diff != "" || r.Meta.Target.URL != "ws://{addr}/" {
		t.Errorf("meta.target url %q, command (-want +got):\n%s", r.Meta.Target.URL, diff)
	}
	var order []int
	for _, k := range r.Config.Order {
		order = append(order, k.Connections)
	}
	if diff := cmp.Diff([]int{4, 8}, order); diff != "" {
		t.Errorf("order of connections (-want +got):\n%s", diff)
	}
	want := 3
	if contended {
		want = 2
	}
	if len(r.Curve) != want {
		t.Fatalf("curve has %d points, want 2 + the A-A repeat of a clean headline (contended: %v)", len(r.Curve), contended)
	}
	verdicts := []string{result.VerdictServerSaturated, result.VerdictGeneratorCapped, result.VerdictBoth, result.VerdictNeither}
	for _, p := range r.Curve {
		if p.Status != result.StatusOK {
			t.Errorf("point %d failed: %s\n%s", p.Index, p.FailReason, p.LogTail)
			continue
		}
		if p.ThroughputPerS <= 0 || p.Errors != 0 || !p.Clean && !p.Contended {
			t.Errorf("point %d: throughput %v, errors %d, clean %v; want a clean echo", p.Index, p.ThroughputPerS, p.Errors, p.Clean)
		}
		if p.LatencyNs.Count == 0 || p.LatencyNs.P99 <= 0 {
			t.Errorf("point %d latency %+v", p.Index, p.LatencyNs)
		}
		if s := p.ServerCPU; s.Samples == 0 || s.MeanCores <= 0 || s.UserSeconds+s.SystemSeconds <= 0 {
			t.Errorf("point %d server cpu %+v: want samples and CPU used", p.Index, s)
		}
		if !slices.Contains(verdicts, p.Verdict) || p.VerdictReason == "" {
			t.Errorf("point %d verdict %q (%q)", p.Index, p.Verdict, p.VerdictReason)
		}
	}
	if !contended {
		aa := r.Curve[2]
		if aa.Role != result.RoleAARepeat || aa.Batch != r.Headline.Batch || aa.Connections != r.Headline.Connections {
			t.Errorf("last point %+v is not the A-A repeat of the headline %+v", aa, r.Headline)
		}
		if r.NoiseFloorPct == nil && !aa.Contended {
			t.Error("no noise floor from a clean A-A repeat")
		}
		if r.NoiseFloorPct != nil {
			if want := *result.NoiseFloorPct(r.Headline.ThroughputPerS, aa.ThroughputPerS); *r.NoiseFloorPct != want {
				t.Errorf("noise floor %v, want %v", *r.NoiseFloorPct, want)
			}
		}
		if !r.Headline.Clean || r.Headline.Batch != 10 || r.Headline.ThroughputPerS <= 0 {
			t.Errorf("headline %+v", r.Headline)
		}
		if !strings.Contains(table, "errors: none") || !strings.Contains(flatText(table), "noise floor (A-A)") {
			t.Errorf("table lacks the errors line or the noise floor:\n%s", table)
		}
	}
	data, err := os.ReadFile(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := publish.Read(data, o.Out); err != nil {
		t.Errorf("publish.Read rejects the sweep document: %v", err)
	}

	// The server was a tree: every connection of a rung had its own cat
	// (the smallest rung has 4), and the harness stopped all of them.
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.maxCats < 4 {
		t.Errorf("websocketd had at most %d cat children at once, want at least 4 (one per connection)", w.maxCats)
	}
	// The start time tells a survivor from a new process that reused its pid.
	for p := range w.seen {
		if st, err := supervise.ReadStat(p.Pid); err == nil && st.StartTicks == p.StartTicks && st.State != 'Z' {
			t.Errorf("%s %d outlived the sweep", comm(p.Pid), p.Pid)
		}
	}
}

//go:build validate && linux

package harness_test

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/result"
)

// TestAgentsQuotaCapsThePoint: one agent held to 5% of a CPU by a cgroup
// quota cannot keep its share of an open-loop rate: the point is
// generator-capped and names it. (GENERATOR's fixed flags, here --rate,
// are every point's, split across the agents.)
func TestAgentsQuotaCapsThePoint(t *testing.T) {
	needProcs(t)
	checkQuotaCaps(t, agentOptions(t, 2*time.Second))
}

// checkQuotaCaps runs o's one point with agent 1 held to 5% of a CPU at
// an open-loop rate of 1,500 ops/s: the point must be generator-capped,
// naming agent 1.
func checkQuotaCaps(t *testing.T, o *testSweep) {
	t.Helper()
	o.Generator = filepath.Join(bin, "ceiling") + " load --rate 1500"
	o.AgentsEnv.Quota = map[int]float64{1: 0.05}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, _, _ := runSweep(t, ctx, o, refTarget(t))
	if len(r.Curve) == 0 {
		t.Fatal("no point")
	}
	p := r.Curve[0]
	if p.Status != result.StatusOK && strings.Contains(p.FailReason, "quota") {
		t.Skipf("no cgroup quota here: %s", p.FailReason)
	}
	if p.Status != result.StatusOK {
		t.Fatalf("point failed: %s\n%s", p.FailReason, p.LogTail)
	}
	for _, a := range p.Agents {
		t.Logf("agent %d: rate %v, behind %v: %s", a.Index, *a.RateOpsPerS, a.Behind, a.Evidence)
	}
	named := regexp.MustCompile(`agent ([0-9, ]+) fell behind`).FindStringSubmatch(p.VerdictReason)
	if !result.IsLowerBound(p.Verdict) || !p.Agents[1].Behind || named == nil || !slices.Contains(strings.Split(named[1], ", "), "1") {
		t.Errorf("verdict %s: %s; want generator-capped naming agent 1", p.Verdict, p.VerdictReason)
	}
}

// TestAgentsQuotaInNetworkNamespaces: the cgroup quota on one agent caps
// the point the same when the agents run in network namespaces.
func TestAgentsQuotaInNetworkNamespaces(t *testing.T) {
	lab := agentsLab(t, "TestAgentsQuotaInNetworkNamespaces")
	if lab == nil {
		return
	}
	o := agentOptions(t, 2*time.Second)
	o.AgentsEnv.Lab = lab
	checkQuotaCaps(t, o)
}

//go:build e2e

package agents

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/netnstest"
	"github.com/ceiling-bench/ceiling/load"
	_ "github.com/ceiling-bench/ceiling/load/scenario/echo"
	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
)

// testParse is the handful of `ceiling load` flags the in-process tests
// use (the real agent uses the CLI's own flag set).
func testParse(args []string) (load.Config, error) {
	cfg := load.DefaultConfig()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.Scenario, "scenario", "echo", "")
	fs.StringVar(&cfg.URL, "url", "", "")
	fs.IntVar(&cfg.Connections, "connections", 1, "")
	fs.Float64Var(&cfg.Rate, "rate", 0, "")
	d := fs.Duration("duration", time.Second, "")
	w := fs.Duration("warmup", 100*time.Millisecond, "")
	fs.StringVar(&cfg.SourceAddrs, "source-addrs", "", "")
	fs.Bool("quiet", false, "")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.DurationNs, cfg.WarmupNs = int64(*d), int64(*w)
	def, _ := load.Lookup(cfg.Scenario)
	cfg.Params = def.NewParams()
	return cfg, cfg.Validate(nil)
}

// runPoint coordinates n in-process agents (skew[i] shifts agent i's
// wall clock; cut cancels one agent's context after the window opened).
func runPoint(t *testing.T, plan Plan, skew map[int]time.Duration, run []int, cut map[int]time.Duration) (*Outcome, error, []error) {
	t.Helper()
	co, err := Listen("127.0.0.1:0", plan, testToken)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errs := make([]error, plan.Agents)
	var wg sync.WaitGroup
	for _, i := range run {
		wg.Add(1)
		go func() {
			defer wg.Done()
			actx := ctx
			if d, ok := cut[i]; ok {
				var c context.CancelFunc
				actx, c = context.WithTimeout(ctx, d)
				defer c()
			}
			errs[i] = RunAgent(actx, AgentConfig{Coordinator: co.Addr(), Index: i, Token: testToken, WallSkew: skew[i], DialTimeout: 5 * time.Second, Parse: testParse})
		}()
	}
	out, err := co.Run(ctx)
	wg.Wait()
	return out, err, errs
}

func testThreeAgentsMergeExactly(t *testing.T) {
	srv := refservertest.Start(t, refserver.Config{})
	plan := Plan{
		Agents: 3, Connections: 7, Warmup: 200 * time.Millisecond, Duration: time.Second,
		Args:         []string{"--scenario", "echo", "--url", srv.EchoURL(), "--connections", "7", "--duration", "1s", "--warmup", "200ms"},
		ReadyTimeout: 10 * time.Second, ResultTimeout: 10 * time.Second, MaxStartSkew: 100 * time.Millisecond,
	}
	out, err, errs := runPoint(t, plan, map[int]time.Duration{1: 250 * time.Millisecond}, []int{0, 1, 2}, nil)
	if err != nil {
		t.Fatalf("point: %v (agents: %v)", err, errs)
	}
	m := out.Merged
	var msgs int64
	var tput float64
	conns := 0
	want := load.NewHistogram()
	for _, a := range out.reports {
		msgs += a.Result.Summary.Messages
		tput += a.Result.Summary.ThroughputPerS
		conns += a.Connections
		if _, err := want.MergeExact(a.latency); err != nil {
			t.Fatal(err)
		}
		t.Logf("agent %d: %d conns, rtt %v, offset %v, start skew %v (wake late %v), %.0f msg/s, p99 %v",
			a.Index, a.Connections, time.Duration(a.RTTNs), time.Duration(a.ClockOffsetNs), time.Duration(a.StartSkewNs), time.Duration(a.WakeLateNs), a.ThroughputPerS, time.Duration(a.P99Ns))
		if a.StartSkewNs > int64(plan.MaxStartSkew) || a.StartSkewNs < -int64(plan.MaxStartSkew) {
			t.Errorf("agent %d: start skew %v", a.Index, time.Duration(a.StartSkewNs))
		}
	}
	if conns != 7 || m.Summary.ConnectionsRequested != 7 {
		t.Errorf("connections: agents %d, merged %d, want 7", conns, m.Summary.ConnectionsRequested)
	}
	if m.Summary.Messages != msgs || m.Summary.Messages == 0 {
		t.Errorf("merged messages %d, agents' sum %d", m.Summary.Messages, msgs)
	}
	if m.Summary.ThroughputPerS != tput {
		t.Errorf("merged throughput %v, agents' sum %v", m.Summary.ThroughputPerS, tput)
	}
	if got, w := m.Summary.Latency, want.Latency(); got != w || got.Count != msgs {
		t.Errorf("merged latency %+v, want the merged histogram's %+v (count = messages %d)", got, w, msgs)
	}
	// The skewed agent measured the skew as its offset and lined up.
	if off := time.Duration(out.Agents[1].ClockOffsetNs); off > -240*time.Millisecond || off < -260*time.Millisecond {
		t.Errorf("agent 1 (wall clock +250ms): offset %v, want about -250ms", off)
	}
	t.Logf("merged: %.0f msg/s, p99 %v", m.Summary.ThroughputPerS, time.Duration(m.Summary.Latency.P99))
}

func testMissingAgentInvalid(t *testing.T) {
	srv := refservertest.Start(t, refserver.Config{})
	plan := Plan{
		Agents: 3, Connections: 3, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond,
		Args:         []string{"--url", srv.EchoURL(), "--connections", "3"},
		ReadyTimeout: 2 * time.Second,
	}
	_, err, errs := runPoint(t, plan, nil, []int{0, 2}, nil)
	var inv *InvalidError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "agent 1 never joined") {
		t.Fatalf("point: %v, want invalid naming agent 1", err)
	}
	// The others were told abort, then done (this coordinator's one
	// point is over): they end cleanly.
	for _, i := range []int{0, 2} {
		if errs[i] != nil {
			t.Errorf("agent %d: %v, want a clean end after the abort and done", i, errs[i])
		}
	}
}

func testFailedAgentInvalid(t *testing.T) {
	srv := refservertest.Start(t, refserver.Config{})
	plan := Plan{
		Agents: 2, Connections: 2, Warmup: 100 * time.Millisecond, Duration: 2 * time.Second,
		Args:         []string{"--url", srv.EchoURL(), "--connections", "2", "--duration", "2s", "--warmup", "100ms"},
		ReadyTimeout: 5 * time.Second, ResultTimeout: 5 * time.Second,
	}
	out, err, _ := runPoint(t, plan, nil, []int{0, 1}, map[int]time.Duration{1: 1200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "agent 1") {
		t.Fatalf("point: %v, want invalid naming agent 1", err)
	}
	if out.Agents[1].Failure == "" {
		t.Errorf("agent 1's report has no failure: %+v", out.Agents[1])
	}
	b, _ := json.Marshal(out.Agents)
	t.Logf("%v\n%s", err, b)
}

func testBadArgsNamed(t *testing.T) {
	plan := Plan{Agents: 1, Connections: 1, Warmup: 0, Duration: time.Second,
		Args: []string{"--no-such-flag"}, ReadyTimeout: 5 * time.Second}
	_, err, errs := runPoint(t, plan, nil, []int{0}, nil)
	var bad *BadArgsError
	if !errors.As(errs[0], &bad) || err == nil || !strings.Contains(err.Error(), "agent 0 failed") || !strings.Contains(err.Error(), "no-such-flag") {
		t.Fatalf("point %v, agent %v", err, errs[0])
	}
}

// testOpenLoopRatesSplit: --rate R over 3 agents: each asks for its
// share R*c_i/C, and the merge asks for R.
func testOpenLoopRatesSplit(t *testing.T) {
	srv := refservertest.Start(t, refserver.Config{})
	plan := Plan{
		Agents: 3, Connections: 5, Rate: 300, Warmup: 100 * time.Millisecond, Duration: time.Second,
		Args:         []string{"--url", srv.EchoURL(), "--connections", "5", "--rate", "300", "--duration", "1s", "--warmup", "100ms"},
		ReadyTimeout: 10 * time.Second, ResultTimeout: 10 * time.Second, MaxStartSkew: 100 * time.Millisecond,
	}
	out, err, errs := runPoint(t, plan, nil, []int{0, 1, 2}, nil)
	if err != nil {
		t.Fatalf("point: %v (agents: %v)", err, errs)
	}
	var sum float64
	for _, a := range out.Agents {
		_, want := Segment(5, 300, 3, a.Index)
		got := a.Result.Summary.RequestedOpsPerS
		if got == nil || *got != want || a.RateOpsPerS == nil || *a.RateOpsPerS != want {
			t.Errorf("agent %d: requested %v (report %v), want %v", a.Index, got, a.RateOpsPerS, want)
		}
		sum += a.Result.Summary.AttemptedOpsPerS
	}
	m := out.Merged.Summary
	if m.RequestedOpsPerS == nil || *m.RequestedOpsPerS != 300 || m.Mode != "open" {
		t.Errorf("merged: mode %s, requested %v, want open at 300", m.Mode, m.RequestedOpsPerS)
	}
	if m.AttemptedOpsPerS != sum {
		t.Errorf("merged attempted %v, agents' sum %v", m.AttemptedOpsPerS, sum)
	}
	if out.Merged.Generator.ScheduleLag.Count == 0 {
		t.Errorf("no merged schedule lag histogram")
	}
	t.Logf("attempted %.1f/s of 300, schedule lag p99 %v", m.AttemptedOpsPerS, time.Duration(out.Merged.Generator.ScheduleLag.P99))
}

// testAgentsOwnAddressesPastThePortRange: in a network namespace whose
// port range is 100 ports, 3 agents hold 300 connections to one loopback
// server, each from addresses of its own (LoopbackSourceAddrs: 2 each, at
// half the range per address), as three hosts would.
func testAgentsOwnAddressesPastThePortRange(t *testing.T) {
	if !netnstest.Child() {
		netnstest.Run(t, t.Name())
		return
	}
	netnstest.LoopbackUp(t)
	netnstest.PortRange(t, 40000, 40099)
	srv := refservertest.Start(t, refserver.Config{})
	args := []string{"--url", srv.EchoURL(), "--connections", "300", "--duration", "500ms", "--warmup", "100ms"}
	plan := Plan{
		Agents: 3, Connections: 300, Warmup: 100 * time.Millisecond, Duration: 500 * time.Millisecond, Args: args,
		AgentArgs:    LoopbackSourceAddrs(args, srv.EchoURL(), load.LocalPortRange()),
		ReadyTimeout: 30 * time.Second, ResultTimeout: 10 * time.Second, MaxStartSkew: 200 * time.Millisecond,
	}
	out, err, errs := runPoint(t, plan, nil, []int{0, 1, 2}, nil)
	if err != nil {
		t.Fatalf("point: %v (agents: %v)", err, errs)
	}
	seen := map[string]int{}
	for _, a := range out.Agents {
		want := []string{fmt.Sprintf("127.0.%d.1", a.Index+1), fmt.Sprintf("127.0.%d.2", a.Index+1)}
		if !slices.Equal(a.SourceAddrs, want) {
			t.Errorf("agent %d: source addresses %v, want %v", a.Index, a.SourceAddrs, want)
		}
		for _, s := range a.SourceAddrs {
			seen[s]++
		}
	}
	if s := out.Merged.Summary; s.ConnectionsOpen != 300 || s.Errors != 0 {
		t.Errorf("%d of 300 open, errors %v", s.ConnectionsOpen, s.ErrorsByReason)
	}
	t.Logf("300 connections over a 100-port range from %d addresses (3 agents)", len(seen))
}

// TestPoints: points coordinated for real, the agents in-process against a
// refserver on loopback: three agents merge exactly; a missing or failed
// agent makes the point invalid, naming it; bad arguments are named; an
// open loop's rate is split by the agents' shares; a hub serves point after
// point; and, as root, in network namespaces, agents hold connections past
// the port range from addresses of their own, on loopback and as three
// hosts on a bridge (netns_linux_test.go).
func TestPoints(t *testing.T) {
	t.Run("three agents merge exactly", testThreeAgentsMergeExactly)
	t.Run("missing agent invalid", testMissingAgentInvalid)
	t.Run("failed agent invalid", testFailedAgentInvalid)
	t.Run("bad args named", testBadArgsNamed)
	t.Run("open loop rates split", testOpenLoopRatesSplit)
	t.Run("hub serves points", testHubServesPoints)
	t.Run("agents own addresses past the port range", testAgentsOwnAddressesPastThePortRange)
	inNamespaces(t)
}

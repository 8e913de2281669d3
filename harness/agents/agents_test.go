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

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/ceiling-bench/ceiling/internal/netnstest"
	"github.com/ceiling-bench/ceiling/load"
	_ "github.com/ceiling-bench/ceiling/load/scenario/echo"
	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
	"github.com/ceiling-bench/ceiling/result"
)

func TestDecodeStrict(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"v":2,"type":"hello","body":{"index":0,"extra":1}}`, `unknown field "extra"`},
		{`{"v":2,"type":"hello","body":{"index":0},"x":2}`, `unknown field "x"`},
		{`{"v":1,"type":"hello","body":{"index":0}}`, "v: 1, want protocol version 2"},
		{`{"type":"hello","body":{"index":0}}`, "v: 0"},
		{`{"v":2,"type":"hullo","body":{}}`, `type: "hullo"`},
		{`{"v":2,"type":"hello","body":{"index":-1}}`, "hello.index: -1 is negative"},
		{`{"v":2,"type":"hello","body":{"index":"a"}}`, "hello: index: want int"},
		{`{"v":2,"type":"ready","body":{"open":-3,"rtt_ns":1,"offset_ns":0}}`, "ready.open: -3 is negative"},
		{`{"v":2,"type":"go","body":{"load_at":5,"window_start":6,"window_end":6}}`, "go.window_end: not after window_start"},
		{`{"v":2,"type":"welcome","body":{"agents":0,"args":["x"],"samples":8}}`, "welcome.agents: 0"},
		{`{"v":2,"type":"result","body":{"result":null,"latency":null,"lag":null,"failure":""}}`, "result.result: missing"},
		{`{"v":2,"type":"hello"}`, "hello: no body"},
		{`{"v":2,"type":"hello","body":{"index":0,"nonce":"abc"}}`, "hello.nonce: want 32 bytes in lower-case hex"},
		{`{"v":2,"type":"hello","body":{"index":0}}`, "hello.nonce"},
		{`{"v":2,"type":"auth","body":{"proof":"ABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABABAB"}}`, "auth.proof: want 32 bytes"},
		{`{"v":2,"type":"challenge","body":{"nonce":"abababababababababababababababababababababababababababababababab","proof":""}}`, "challenge.proof"},
	} {
		_, _, err := Decode([]byte(tc.line))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%s) = %v, want an error with %q", tc.line, err, tc.want)
		}
	}
	line, err := Encode(tGo, &Go{LoadAt: 1, WindowStart: 2, WindowEnd: 3})
	if err != nil {
		t.Fatal(err)
	}
	typ, body, err := Decode(line)
	if err != nil || typ != tGo || *body.(*Go) != (Go{1, 2, 3}) {
		t.Fatalf("round trip: %v %v %v", typ, body, err)
	}
}

func TestSegmentArgs(t *testing.T) {
	in := []string{"--scenario", "echo", "--connections", "10", "--rate=100", "--measure-marker", "m", "--json", "j", "--quiet"}
	got := strings.Join(SegmentArgs(in, 10, 100, 3, 2), " ")
	if want := "--scenario echo --quiet --connections 4 --rate 40"; got != want {
		t.Fatalf("SegmentArgs = %q, want %q", got, want)
	}
}

func TestSampleOffset(t *testing.T) {
	// The coordinator's clock is 250 ms ahead; 2 ms each way.
	s := Sample{T1: 1000e6, T2: 1252e6, T3: 1252e6 + 10, T4: 1004e6 + 10}
	if s.RTT() != 4e6 || s.Offset() != 250e6 {
		t.Fatalf("rtt %d offset %d", s.RTT(), s.Offset())
	}
}

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

func TestThreeAgentsMergeExactly(t *testing.T) {
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

func TestMissingAgentInvalid(t *testing.T) {
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

func TestFailedAgentInvalid(t *testing.T) {
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

func TestBadArgsNamed(t *testing.T) {
	plan := Plan{Agents: 1, Connections: 1, Warmup: 0, Duration: time.Second,
		Args: []string{"--no-such-flag"}, ReadyTimeout: 5 * time.Second}
	_, err, errs := runPoint(t, plan, nil, []int{0}, nil)
	var bad *BadArgsError
	if !errors.As(errs[0], &bad) || err == nil || !strings.Contains(err.Error(), "agent 0 failed") || !strings.Contains(err.Error(), "no-such-flag") {
		t.Fatalf("point %v, agent %v", err, errs[0])
	}
}

// TestMergeRefusesOtherConfiguration: a histogram of another range or
// precision is never merged: the point fails naming the agent.
func TestMergeRefusesOtherConfiguration(t *testing.T) {
	good := load.NewHistogram()
	good.Record(1000)
	enc, err := good.Encode()
	if err != nil {
		t.Fatal(err)
	}
	other := hdrhistogram.New(1, 1e6, 2)
	_ = other.RecordValue(1000)
	b, err := other.EncodeV2()
	if err != nil {
		t.Fatal(err)
	}
	mk := func(i int, e load.EncodedHistogram) *Report {
		h, err := load.DecodeHistogram(e)
		if err != nil {
			t.Fatal(err)
		}
		return &Report{Agent: Agent{AgentReport: result.AgentReport{Index: i}, Result: &load.Result{Summary: load.Summary{Messages: 1, Latency: h.Latency()}}}, latency: h}
	}
	reports := []*Report{mk(0, enc), mk(1, load.EncodedHistogram{Hdr: string(b), Min: 1000, Max: 1000})}
	_, err = Merge(reports, 2, 0, int64(time.Second))
	if err == nil || !strings.Contains(err.Error(), "agent 1: latency histogram configuration") {
		t.Fatalf("Merge = %v, want a refusal naming agent 1", err)
	}
	// The same two of one configuration merge, counts adding up.
	m, err := Merge([]*Report{mk(0, enc), mk(1, enc)}, 2, 0, int64(time.Second))
	if err != nil || m.Summary.Latency.Count != 2 || m.Summary.Messages != 2 {
		t.Fatalf("Merge = %+v, %v", m, err)
	}
}

// TestOpenLoopRatesSplit: --rate R over 3 agents: each asks for its
// share R*c_i/C, and the merge asks for R.
func TestOpenLoopRatesSplit(t *testing.T) {
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

// TestAgentsOwnAddressesPastThePortRange: in a network namespace whose
// port range is 100 ports, 3 agents hold 300 connections to one loopback
// server, each from addresses of its own (LoopbackSourceAddrs: 2 each, at
// half the range per address), as three hosts would.
func TestAgentsOwnAddressesPastThePortRange(t *testing.T) {
	if !netnstest.Child() {
		netnstest.Run(t, "TestAgentsOwnAddressesPastThePortRange")
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

// TestLateStartIsTheCallersToJudge: an agent whose "started" arrives over
// MaxStartSkew after the common start (less rtt/2 and its own wake-up's
// lateness) is marked LateStart; once every result is merged, Run's error
// is a *LateStartError (an *InvalidError) naming only it.
func TestLateStartIsTheCallersToJudge(t *testing.T) {
	start := int64(1e12)
	pt := &point{p: Plan{MaxStartSkew: 50 * time.Millisecond}, reports: []*Report{
		{Agent: Agent{AgentReport: result.AgentReport{Index: 0, RTTNs: int64(2 * time.Millisecond)}}},
		{Agent: Agent{AgentReport: result.AgentReport{Index: 1, RTTNs: int64(2 * time.Millisecond)}}},
	}}
	g := &Go{WindowStart: start}
	// Agent 0: arrives 60ms after, but its timer woke 20ms late: 39ms.
	pt.started(pt.reports[0], event{index: 0, at: start + int64(60*time.Millisecond), body: &Started{LateNs: int64(20 * time.Millisecond)}}, g)
	// Agent 1: arrives 82ms after, woke on time: 81ms.
	pt.started(pt.reports[1], event{index: 1, at: start + int64(82*time.Millisecond), body: &Started{}}, g)
	if r := pt.reports[0]; r.LateStart || time.Duration(r.StartSkewNs) != 39*time.Millisecond {
		t.Errorf("agent 0: late %v, skew %v; want on time, 39ms", r.LateStart, time.Duration(r.StartSkewNs))
	}
	if r := pt.reports[1]; !r.LateStart || time.Duration(r.StartSkewNs) != 81*time.Millisecond {
		t.Errorf("agent 1: late %v, skew %v; want late, 81ms", r.LateStart, time.Duration(r.StartSkewNs))
	}
	err := pt.lateStarts()
	var late *LateStartError
	var inv *InvalidError
	if !errors.As(err, &late) || !errors.As(err, &inv) || err.Error() != "agents: agent 1 started its window 81ms late (more than 50ms)" {
		t.Fatalf("lateStarts = %v, want a LateStartError naming agent 1 alone", err)
	}
	pt.reports[1].LateStart = false
	if err := pt.lateStarts(); err != nil {
		t.Errorf("no late agent: %v", err)
	}
}

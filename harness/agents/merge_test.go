package agents

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/ceiling-bench/ceiling/load"
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

// The merged point keeps the agents' engine and client pattern, so a
// sweep through agents states its meta.client_io as one generator does.
func TestMergeKeepsEngineAndIOPattern(t *testing.T) {
	var dst load.GeneratorStats
	for range 2 {
		mergeGenerator(&dst, &load.GeneratorStats{Engine: load.EngineLoop, IOPattern: load.IOBatchWake})
	}
	if dst.Engine != load.EngineLoop || dst.IOPattern != load.IOBatchWake {
		t.Errorf("merged engine %q, io_pattern %q; want %q, %q", dst.Engine, dst.IOPattern, load.EngineLoop, load.IOBatchWake)
	}
}

func TestMergeSumsTheAgentsOwnMemory(t *testing.T) {
	rep := func(m *load.SelfMemory) *Report {
		return &Report{Agent: Agent{Result: &load.Result{Generator: load.GeneratorStats{Memory: m}}}}
	}
	pss := func(b, s, e uint64) *load.SelfMemory {
		return &load.SelfMemory{Measure: "pss", BeforeConnectBytes: b, WindowStartBytes: s, WindowEndBytes: e}
	}
	got := sumMemory([]*Report{rep(pss(1, 2, 3)), rep(pss(10, 20, 30))})
	if got == nil || *got != *pss(11, 22, 33) {
		t.Errorf("sum %+v, want 11 22 33", got)
	}
	rss := pss(1, 2, 3)
	rss.Measure = "rss"
	for name, rs := range map[string][]*Report{
		"one agent without": {rep(pss(1, 2, 3)), rep(nil)},
		"two measures":      {rep(pss(1, 2, 3)), rep(rss)},
	} {
		if got := sumMemory(rs); got != nil {
			t.Errorf("%s: %+v, want none (not a partial sum)", name, got)
		}
	}
}

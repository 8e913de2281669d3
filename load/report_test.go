package load_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/scenario/fanout"

	"github.com/google/go-cmp/cmp"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }

func reportCases() map[string]*load.Result {
	clean := &load.Result{
		Config: load.RecordedConfig{Scenario: "echo", URL: "ws://127.0.0.1:6001/echo", Connections: 16, Batch: 10, RecordSize: 256, Payload: "constant", WarmupNs: 2e9},
		Summary: load.Summary{
			Scenario: "echo", Mode: "closed", AttemptedOpsPerS: 15356, AchievedOpsPerS: 15356, ThroughputPerS: 153560, BytesPerS: 153560 * 256, Messages: 1535600,
			MeasuredNs: 10e9, ErrorsByReason: map[string]int64{}, Dropped: i64(0), Reconnects: i64(0),
			ConnectionsRequested: 16, ConnectionsOpen: 16,
			Latency: load.Latency{Count: 1535600, Min: 80000, Mean: 1e6, P50: 984575, P90: 1600511, P99: 4296703, P999: 7196671, Max: 12121518},
		},
		Generator: load.GeneratorStats{CPUCores: 0.46, CPUUserS: 0.7, CPUSystemS: 3.9, RunnableP99Ns: 262144, OSRunDelayNs: 12e8, ReadSyscalls: 318090, MessagesPerRead: 4.83,
			LoadThreads: &load.ThreadStats{Threads: 2, RunNs: 4.5e9, RunDelayNs: 1e8, RunDelayFraction: 0.0217, MaxThreadFraction: 0.03}},
	}
	failing := &load.Result{
		Config: load.RecordedConfig{Scenario: "fanout", URL: "ws://127.0.0.1:6001", Connections: 64, Batch: 5, RecordSize: 512, Payload: "json", WarmupNs: 1e9},
		Summary: load.Summary{
			Scenario: "fanout", Mode: "open", RequestedOpsPerS: f64(1000), AttemptedOpsPerS: 820, AchievedOpsPerS: 812, ThroughputPerS: 50000, BytesPerS: 50000 * 600, Messages: 250000,
			MeasuredNs: 5e9, Errors: 42, ErrorsByReason: map[string]int64{"publish_status_429": 30, "ECONNRESET": 2, "publish_status_500": 10},
			Dropped: i64(2), Reconnects: i64(0), Saturated: true, SaturatedReason: "publisher 0 reached --max-inflight 8 requests: the requested rate was not met",
			ConnectionsRequested: 64, ConnectionsOpen: 64,
			Latency: load.Latency{Count: 250000, Min: 100000, Mean: 2e6, P50: 1500000, P90: 3e6, P99: 9e6, P999: 2e7, Max: 4e7},
			Blocks: fanoutBlock(fanout.Summary{EventsPublished: 4000, DeliveriesExpected: 256000, Delivered: 250000, DeliveredPct: 97.65625, Late: 12, GraceNs: 2e9,
				HTTPFailures: map[string]int64{"status_429": 30, "status_500": 10}, RateLimited429: 30,
				PublishLatency: load.Latency{Count: 800, Min: 200000, P50: 900000, P90: 2e6, P99: 5e6, P999: 6e6, Max: 6e6}}),
		},
		Generator: load.GeneratorStats{CPUCores: 0.97, CPUUserS: 3.1, CPUSystemS: 1.75, RunnableP99Ns: 2097152, OSRunDelayNs: 9e8, ReadSyscalls: 100000, MessagesPerRead: 2.5,
			Engine: load.EngineLoop, Loops: &load.LoopStats{Count: 2, BusyFraction: []float64{0.97, 0.91}, MaxBusy: 0.97, LagP99Ns: 1840000, LagMaxNs: 9200000},
			ScheduleLag: load.Latency{Count: 4060, P50: 400000, P99: 15e6, Max: 3e7}, ScheduleLagP99: 15e6, LateSendsFrac: 0.125},
	}
	preflight := &load.Result{
		Config: load.RecordedConfig{Scenario: "fanout", URL: "ws://127.0.0.1:6001", Connections: 16, Batch: 1, RecordSize: 256, Payload: "constant", WarmupNs: 2e9},
		Summary: load.Summary{Scenario: "fanout", Mode: "closed", Errors: 1, ErrorsByReason: map[string]int64{"preflight": 1},
			Failure: "preflight against ws://127.0.0.1:6001 failed, no load applied: pusher REST: HTTP 401: bad signature (check --app-id, --key and --secret)",
			Dropped: i64(0), Reconnects: i64(0), ConnectionsRequested: 16,
			Blocks: fanoutBlock(fanout.Summary{GraceNs: 2e9, HTTPFailures: map[string]int64{}})},
	}
	// Issue 8 item 10: an overloaded server; most publishes time out, and
	// some of those were delivered all the same.
	overload := &load.Result{
		Config: load.RecordedConfig{Scenario: "fanout", URL: "ws://127.0.0.1:6001", Connections: 392, Batch: 10, RecordSize: 256, Payload: "constant", WarmupNs: 1e9},
		Summary: load.Summary{
			Scenario: "fanout", Mode: "open", RequestedOpsPerS: f64(300), AttemptedOpsPerS: 300, AchievedOpsPerS: 117, ThroughputPerS: 117645.3, Messages: 1176453,
			MeasuredNs: 10e9, Errors: 1830, ErrorsByReason: map[string]int64{"publish_timeout": 1830},
			Dropped: i64(0), Reconnects: i64(0), ConnectionsRequested: 392, ConnectionsOpen: 392,
			Latency: load.Latency{Count: 1176453, Min: 100000, Mean: 2e8, P50: 1e8, P90: 5e8, P99: 9e8, P999: 1e9, Max: 2e9},
			Blocks: fanoutBlock(fanout.Summary{EventsPublished: 11700, DeliveriesExpected: 1176000, Delivered: 1176453, Duplicates: 453, DeliveredPct: 100, GraceNs: 2e9,
				HTTPFailures: map[string]int64{"timeout": 1830}, PublishLatency: load.Latency{Count: 1170, Min: 2e8, P50: 9e8, P90: 1.5e9, P99: 2e9, P999: 2e9, Max: 2e9}}),
		},
		Generator: load.GeneratorStats{CPUCores: 0.5},
	}
	return map[string]*load.Result{"report_clean": clean, "report_failing": failing, "report_preflight": preflight, "report_overload": overload}
}

func TestWriteReportGolden(t *testing.T) {
	for name, r := range reportCases() {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := load.WriteReport(&b, r); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name+".golden")
			if *updateGolden {
				os.MkdirAll("testdata", 0o755)
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), b.String()); diff != "" {
				t.Errorf("report differs from %s (-want +got):\n%s", path, diff)
			}
		})
	}
}

// fanoutBlock is a summary's blocks holding fanout's summary.
func fanoutBlock(f fanout.Summary) map[string]json.RawMessage {
	var s load.Summary
	if err := s.SetBlock(fanout.Name, f); err != nil {
		panic(err)
	}
	return s.Blocks
}

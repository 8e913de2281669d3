package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load/scenario/fanout"

	"github.com/ceiling-bench/ceiling/load/scenario/echo"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/evloop"
	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
	"github.com/google/go-cmp/cmp"
)

// startRefserver runs the bundled server in-process and returns its
// host:port.
func startRefserver(t *testing.T) string { return refservertest.Start(t, refserver.Config{}).Addr }

// runLoadJSON runs `ceiling load` with args plus --json and
// --measure-marker, and returns the report and the decoded document.
func runLoadJSON(t *testing.T, args ...string) (string, load.Result) {
	t.Helper()
	dir := t.TempDir()
	jsonPath, marker := filepath.Join(dir, "r.json"), filepath.Join(dir, "marker")
	var stdout, stderr bytes.Buffer
	args = append([]string{"load", "--json", jsonPath, "--measure-marker", marker, "--quiet"}, args...)
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("ceiling %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("measure marker: %v", err)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var r load.Result
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("--json does not decode into load.Result: %v", err)
	}
	// Every documented top-level and summary field is present by name.
	var raw map[string]map[string]any
	json.Unmarshal(b, &raw)
	for _, k := range []string{"throughput_per_s", "bytes_per_s", "errors", "dropped", "reconnects", "saturated", "latency_ns"} {
		if _, ok := raw["summary"][k]; !ok {
			t.Errorf("summary.%s missing", k)
		}
	}
	for _, k := range []string{"cpu_cores", "schedule_lag_p99_ns"} {
		if _, ok := raw["generator"][k]; !ok {
			t.Errorf("generator.%s missing", k)
		}
	}
	if strings.Contains(string(b), "app-secret") || strings.Contains(stdout.String()+stderr.String(), "app-secret") {
		t.Error("the secret is in the JSON")
	}
	if !strings.HasPrefix(stdout.String(), "errors: 0\n") {
		t.Errorf("report does not start with the error count:\n%s", stdout.String())
	}
	return stdout.String(), r
}

func checkCommon(t *testing.T, r load.Result, scenario, mode string, conns int) {
	t.Helper()
	if r.SchemaVersion != load.SchemaVersion || r.Meta.Version != version || r.Meta.GitRef == "" || len(r.Meta.Command) < 3 {
		t.Errorf("meta: %+v", r.Meta)
	}
	h := r.Meta.Hardware
	if h.LogicalCPUs < 1 || h.GOMAXPROCS < 1 || h.GoVersion == "" || h.Kernel == "" || h.MemoryBytes == 0 || len(h.CPUAffinity) == 0 {
		t.Errorf("hardware: %+v", h)
	}
	s := r.Summary
	if s.Scenario != scenario || s.Mode != mode || s.Errors != 0 || len(s.ErrorsByReason) != 0 {
		t.Errorf("scenario %q mode %q errors %d %v", s.Scenario, s.Mode, s.Errors, s.ErrorsByReason)
	}
	if s.ConnectionsOpen != conns || s.ConnectionsRequested != conns {
		t.Errorf("connections %d/%d, want %d", s.ConnectionsOpen, s.ConnectionsRequested, conns)
	}
	if s.MeasuredNs != r.Config.DurationNs || s.Messages <= 0 || s.Latency.Count != s.Messages {
		t.Errorf("measured %d messages %d latency count %d", s.MeasuredNs, s.Messages, s.Latency.Count)
	}
	if got, want := s.ThroughputPerS, float64(s.Messages)/(float64(s.MeasuredNs)/1e9); got != want {
		t.Errorf("throughput_per_s %v, want messages/window %v", got, want)
	}
	l := s.Latency
	if !(l.Min > 0 && l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		t.Errorf("latency_ns not ordered: %+v", l)
	}
	if s.Dropped == nil || *s.Dropped != 0 || s.Reconnects == nil || *s.Reconnects != 0 || s.Saturated {
		t.Errorf("dropped %v reconnects %v saturated %v", s.Dropped, s.Reconnects, s.Saturated)
	}
	g := r.Generator
	if g.CPUCores <= 0 || g.CPUUserS+g.CPUSystemS <= 0 || g.ReadSyscalls <= 0 || g.MessagesPerRead <= 0 {
		t.Errorf("generator: %+v", g)
	}
	if mode == "open" {
		if s.RequestedOpsPerS == nil || g.ScheduleLag.Count == 0 || g.ScheduleLagP99 != g.ScheduleLag.P99 {
			t.Errorf("open loop: requested %v lag %+v", s.RequestedOpsPerS, g.ScheduleLag)
		}
	} else if s.RequestedOpsPerS != nil || g.ScheduleLag.Count != 0 {
		t.Errorf("closed loop: requested %v lag %+v", s.RequestedOpsPerS, g.ScheduleLag)
	}
}

// compactJSON compares JSON documents kept raw (config.params) by their
// compact form: the document on disk is indented.
var compactJSON = cmp.Transformer("compact", func(m json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, m); err != nil {
		return "invalid JSON: " + string(m)
	}
	return b.String()
})

func TestLoadEchoAgainstRefserver(t *testing.T) {
	addr := startRefserver(t)
	url := "ws://" + addr + "/echo"
	t.Run("closed", func(t *testing.T) {
		_, r := runLoadJSON(t, "--url", url, "--connections", "4", "--batch", "10", "--record-size", "200",
			"--payload", "json", "--payload-seed", "5", "--duration", "1s", "--warmup", "200ms")
		checkCommon(t, r, "echo", "closed", 4)
		want := load.Config{Scenario: "echo", URL: url,
			Connections: 4, Batch: 10, RecordSize: 200, DurationNs: 1e9, WarmupNs: 2e8, MaxInflight: load.DefaultMaxInflight,
			Payload: "json", PayloadSeed: 5, ConnectStrategy: "bounded", ConnectConcurrency: 32, ConnectStaggerMs: 10,
			Params: &echo.Params{IO: echo.DefaultIO}, MeasureMarker: r.Config.MeasureMarker}
		rec, err := want.Record()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(rec, r.Config, compactJSON); diff != "" {
			t.Errorf("config (-want +got):\n%s", diff)
		}
		if r.Summary.Messages%10 != 0 || r.Summary.BytesPerS != r.Summary.ThroughputPerS*200 {
			t.Errorf("messages %d bytes/s %v", r.Summary.Messages, r.Summary.BytesPerS)
		}
	})
	t.Run("open", func(t *testing.T) {
		_, r := runLoadJSON(t, "--url", url, "--connections", "4", "--batch", "2", "--rate", "400",
			"--duration", "1s", "--warmup", "200ms", "--connect-strategy", "stagger", "--connect-stagger-ms", "5")
		checkCommon(t, r, "echo", "open", 4)
		if ops := r.Summary.AchievedOpsPerS; ops < 390 || ops > 410 {
			t.Errorf("achieved %v ops/s, want 400", ops)
		}
	})
}

func TestLoadFanoutAgainstRefserver(t *testing.T) {
	addr := startRefserver(t)
	url := "ws://" + addr
	check := func(t *testing.T, r load.Result, batch int) {
		t.Helper()
		f := fanoutOf(t, r)
		if f == nil {
			t.Fatal("summary.fanout missing")
		}
		// 12 subscribers over 3 channels: every event reaches 4.
		if f.EventsPublished == 0 || f.DeliveriesExpected != 4*f.EventsPublished {
			t.Errorf("published %d expected %d, want 4 deliveries per event", f.EventsPublished, f.DeliveriesExpected)
		}
		if f.Delivered != f.DeliveriesExpected || f.DeliveredPct != 100 || f.Late != 0 || r.Summary.Messages != f.Delivered {
			t.Errorf("delivered %d of %d (%v%%), late %d, messages %d", f.Delivered, f.DeliveriesExpected, f.DeliveredPct, f.Late, r.Summary.Messages)
		}
		if f.PublishLatency.Count*int64(batch) != f.EventsPublished || len(f.HTTPFailures) != 0 || f.RateLimited429 != 0 || f.GraceNs != int64(2*time.Second) {
			t.Errorf("publish latency n=%d, failures %v, 429 %d, grace %d", f.PublishLatency.Count, f.HTTPFailures, f.RateLimited429, f.GraceNs)
		}

		// The subscribers ran on the event loops: their evidence is in.
		if g := r.Generator; evloop.Supported && (g.Engine != load.EngineLoop || g.Loops == nil || g.Loops.Count < 1 || len(g.Loops.BusyFraction) != g.Loops.Count) {
			t.Errorf("engine %q loops %+v", g.Engine, g.Loops)
		}
	}
	t.Run("closed", func(t *testing.T) {
		report, r := runLoadJSON(t, "--scenario", "fanout", "--url", url, "--connections", "12", "--channels", "3",
			"--publishers", "2", "--duration", "1s", "--warmup", "200ms", "--secret", "app-secret")
		checkCommon(t, r, "fanout", "closed", 12)
		check(t, r, 1)
		if !strings.Contains(report, "(100.00%)") {
			t.Errorf("report:\n%s", report)
		}
	})
	t.Run("open batch", func(t *testing.T) {
		_, r := runLoadJSON(t, "--scenario", "fanout", "--url", url, "--connections", "12", "--channels", "3",
			"--batch", "5", "--rate", "100", "--payload", "json", "--payload-seed", "2", "--duration", "1s", "--warmup", "200ms")
		checkCommon(t, r, "fanout", "open", 12)
		check(t, r, 5)
		if ops := r.Summary.AchievedOpsPerS; ops < 98 || ops > 102 {
			t.Errorf("achieved %v requests/s, want 100", ops)
		}
	})
}

func TestLoadFanoutPreflightStopsOnWrongSecret(t *testing.T) {
	addr := startRefserver(t)
	var stdout, stderr bytes.Buffer
	err := run([]string{"load", "--scenario", "fanout", "--url", "ws://" + addr, "--secret", "wrong", "--quiet", "--duration", "1s"}, &stdout, &stderr)
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("err %v (exit %d), want exit 1", err, exitCode(err))
	}
	for _, want := range []string{"preflight", "401", "--secret"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if !strings.HasPrefix(stdout.String(), "FAILED: preflight") || !strings.Contains(stdout.String(), "\nERRORS: 1") {
		t.Errorf("report does not lead with the failure:\n%s", stdout.String())
	}
}

// A proxy in front of refserver answers some publishes itself with 429 and
// 500: the failures are counted by reason (429 on its own too), the run
// leads its report with them, and failed events are not expected to be
// delivered.
func TestLoadFanoutCountsHTTPFailuresByReason(t *testing.T) {
	addr := startRefserver(t)
	target, _ := neturl.Parse("http://" + addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var n atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			switch k := n.Add(1); {
			case k > 1 && k%5 == 0: // never the preflight
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			case k > 1 && k%7 == 0:
				http.Error(w, "boom", http.StatusInternalServerError)
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)

	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := run([]string{"load", "--scenario", "fanout", "--url", "ws" + strings.TrimPrefix(front.URL, "http"),
		"--connections", "4", "--channels", "2", "--duration", "1s", "--warmup", "200ms", "--quiet",
		"--json", filepath.Join(dir, "r.json")}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "r.json"))
	var r load.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	f, s := fanoutOf(t, r), r.Summary
	if f.RateLimited429 == 0 || f.HTTPFailures["status_429"] != f.RateLimited429 || f.HTTPFailures["status_500"] == 0 {
		t.Fatalf("http failures %v, 429 %d", f.HTTPFailures, f.RateLimited429)
	}
	if s.ErrorsByReason["publish_status_429"] != f.RateLimited429 || s.Errors != f.HTTPFailures["status_429"]+f.HTTPFailures["status_500"] {
		t.Fatalf("errors %d by reason %v", s.Errors, s.ErrorsByReason)
	}
	if f.Delivered != f.DeliveriesExpected || f.EventsPublished == 0 {
		t.Fatalf("delivered %d of %d expected for %d events", f.Delivered, f.DeliveriesExpected, f.EventsPublished)
	}
	if !strings.HasPrefix(stdout.String(), "ERRORS: ") || !strings.Contains(stdout.String(), "rate limited") {
		t.Fatalf("report:\n%s", stdout.String())
	}
}

// fanoutOf is the result's fanout block, nil when it has none.
func fanoutOf(t *testing.T, r load.Result) *fanout.Summary {
	t.Helper()
	var f fanout.Summary
	ok, err := r.Summary.Block(fanout.Name, &f)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return nil
	}
	return &f
}

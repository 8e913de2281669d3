//go:build e2e

package nodegen

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/scenario/fanout"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
)

func TestMain(m *testing.M) {
	pinning.Init() // the throttled refserver is started through pinning.Command
	os.Exit(m.Run())
}

// needNode returns the path of node, skipping when node or the generator's
// dependencies are missing, and failing instead under CI=true, where
// .ci/run installs them.
func needNode(t *testing.T) string {
	t.Helper()
	missing := func(msg string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (CI=true: .ci/run installs it, so this is a failure)", msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed (apt-get install nodejs npm)")
	}
	for _, m := range []string{"ws", "hdr-histogram-js"} {
		if _, err := os.Stat(filepath.Join("node_modules", m, "package.json")); err != nil {
			missing("node_modules/" + m + " is missing: npm ci --prefix benchmark/generators/node")
		}
	}
	return node
}

// runGen runs gen.js with args, bounded in time, and returns its exit
// status and stderr.
func runGen(t *testing.T, node string, timeout time.Duration, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"gen.js"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee) && ctx.Err() == nil:
		return ee.ExitCode(), stderr.String()
	default:
		t.Fatalf("node gen.js %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		return -1, ""
	}
}

// readResult decodes a generator's --json as the harness does.
func readResult(t *testing.T, path string) *load.Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no JSON written: %v", err)
	}
	var r load.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if r.SchemaVersion != load.SchemaVersion {
		t.Fatalf("schema_version %d, want %d", r.SchemaVersion, load.SchemaVersion)
	}
	return &r
}

// A bad flag exits 2 before connecting (the URL is a port nobody serves,
// and no JSON is written), with a message naming the flag.
func testBadFlagExits2(t *testing.T, node string) {
	for _, c := range []struct {
		args []string
		name string
	}{
		{[]string{"--connections", "0"}, "--connections"},
		{[]string{"--bogus", "1"}, "--bogus"},
		{[]string{"--duration", "ten"}, "--duration"},
		{[]string{"--rate", "100"}, "--rate"},
		{[]string{"--drop"}, "--drop"},
		{[]string{"--payload", "json"}, "--payload"},
		{[]string{"--scenario", "echo", "--channels", "2"}, "--channels"},
		{[]string{"--scenario", "fanout", "--connections", "2", "--channels", "3"}, "--channels"},
		{[]string{"--scenario", "fanout", "--secret", ""}, "--secret"},
		{[]string{"--scenario", "echo", "--url", "ws://127.0.0.1:2/echo"}, "--url"},
		{[]string{"--connect-strategy", "all-at-once", "--connect-concurrency", "4"}, "--connect-concurrency"},
	} {
		out := filepath.Join(t.TempDir(), "load.json")
		args := append([]string{"--url", "ws://127.0.0.1:1/echo", "--json", out}, c.args...)
		code, stderr := runGen(t, node, 30*time.Second, args...)
		if code != 2 || !strings.Contains(stderr, c.name) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", c.args, code, stderr, c.name)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote a JSON document for bad input", c.args)
		}
	}
}

// The histogram's percentiles match a sorted reference (gen.js --self-test).
func testSelfTest(t *testing.T, node string) {
	if code, stderr := runGen(t, node, time.Minute, "--self-test"); code != 0 {
		t.Fatalf("--self-test: exit %d\n%s", code, stderr)
	}
}

// TestContract is the Node generator against the generator contract
// (docs/ARCHITECTURE.md): one short run of each scenario against
// refserver, with exactly the flags the harness appends: exit 0, the
// marker created, a schema_version 2 document whose figures hang
// together; a bad flag exits 2 before connecting; its histogram agrees
// with a sorted reference; and fanout over several --url nodes of one
// cluster, or of none (cluster_test.go).
func TestContract(t *testing.T) {
	node := needNode(t)
	t.Run("bad flags", func(t *testing.T) { testBadFlagExits2(t, node) })
	t.Run("self test", func(t *testing.T) { testSelfTest(t, node) })
	if testing.Short() {
		t.Skip("-short: runs the generator against a server")
	}
	t.Run("fanout over one cluster", func(t *testing.T) { testFanoutMultiURL(t, node) })
	t.Run("fanout over no cluster", func(t *testing.T) { testFanoutPreflightNoCluster(t, node) })
	srv := refservertest.Start(t, refserver.Config{})
	for _, sc := range []string{"echo", "fanout"} {
		t.Run(sc, func(t *testing.T) {
			dir := t.TempDir()
			marker, out := filepath.Join(dir, "marker"), filepath.Join(dir, "load.json")
			url := "ws://" + srv.Addr
			extra := []string{"--app-id", refserver.DefaultAppID, "--key", refserver.DefaultKey, "--secret", refserver.DefaultSecret, "--channels", "2"}
			if sc == "echo" {
				url, extra = srv.EchoURL(), nil
			}
			args := append([]string{"--scenario", sc, "--url", url, "--connections", "8", "--batch", "10", "--record-size", "64",
				"--duration", "1s", "--warmup", "500ms", "--connect-strategy", "bounded", "--connect-concurrency", "32",
				"--measure-marker", marker, "--json", out, "--quiet"}, extra...)
			start := time.Now()
			code, stderr := runGen(t, node, 60*time.Second, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("took %v: the generator must stop by itself soon after the window and drain", took)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Errorf("measure marker: %v", err)
			}
			r := readResult(t, out)
			s := r.Summary
			if s.Scenario != sc || s.Mode != "closed" || s.ConnectionsOpen != 8 || s.Errors != 0 || s.Failure != "" {
				t.Fatalf("summary %+v", s)
			}
			if s.Messages == 0 || s.Latency.Count != s.Messages || s.MeasuredNs != int64(time.Second) {
				t.Errorf("messages %d, latency count %d, measured %d ns", s.Messages, s.Latency.Count, s.MeasuredNs)
			}
			if d := s.ThroughputPerS - float64(s.Messages); d > 1 || d < -1 {
				t.Errorf("throughput %v per s from %d messages in a 1 s window", s.ThroughputPerS, s.Messages)
			}
			l := s.Latency
			if !(0 < l.Min && l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
				t.Errorf("latency not ordered: %+v", l)
			}
			if s.AchievedOpsPerS <= 0 || s.AttemptedOpsPerS < s.AchievedOpsPerS {
				t.Errorf("ops: attempted %v, achieved %v", s.AttemptedOpsPerS, s.AchievedOpsPerS)
			}
			g := r.Generator
			if g.Engine != "node-ws" || g.CPUCores <= 0 || g.CPUUserS <= 0 {
				t.Errorf("generator %+v", g)
			}
			if sc == "echo" {
				if s.Messages != 10*int64(s.AchievedOpsPerS) {
					t.Errorf("%d messages from %v batches of 10", s.Messages, s.AchievedOpsPerS)
				}
				return
			}
			var f fanout.Summary
			if ok, err := s.Block("fanout", &f); !ok || err != nil {
				t.Fatalf("summary.fanout: %v %v", ok, err)
			}
			// 8 subscribers over 2 channels: every event has 4.
			if f.DeliveredPct != 100 || f.Delivered != s.Messages || f.DeliveriesExpected != 4*f.EventsPublished || f.PublishLatency.Count == 0 {
				t.Errorf("fanout %+v", f)
			}
			if strings.Contains(strings.Join(r.Meta.Command, " "), refserver.DefaultSecret) {
				t.Errorf("the secret is in meta.command: %q", r.Meta.Command)
			}
		})
	}
}

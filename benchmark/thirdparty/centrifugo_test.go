//go:build e2e

// Package thirdparty drives real servers nobody here wrote with the scenario
// files in benchmark/scenarios, through the `ceiling load` binary, as a user
// would.
package thirdparty

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// centrifugoInstall is the command .ci/run uses; keep the two in step.
const centrifugoInstall = "go install github.com/centrifugal/centrifugo/v6@v6.9.1"

// repoRoot is two levels up from this package (benchmark/thirdparty).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", root, err)
	}
	return root
}

// findCentrifugo looks in PATH, then in $(go env GOBIN) and $(go env
// GOPATH)/bin, where `go install` puts it (GitHub's runners do not always
// have that directory in PATH). Without it the test is skipped, unless CI is
// set: .ci/run installs it, so there a missing binary is a failure.
func findCentrifugo(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("centrifugo"); err == nil {
		return p
	}
	var dirs []string
	for _, v := range []string{"GOBIN", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			continue
		}
		d := string(bytes.TrimSpace(out))
		if d == "" {
			continue
		}
		if v == "GOPATH" {
			d = filepath.Join(filepath.SplitList(d)[0], "bin")
		}
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		p := filepath.Join(d, "centrifugo")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	msg := fmt.Sprintf("centrifugo is not installed (not in PATH nor in %v); install it with: %s", dirs, centrifugoInstall)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI=%s: .ci/run installs it, so this is a failure)", msg, os.Getenv("CI"))
	}
	t.Skip(msg)
	return ""
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type kind struct {
	Type         string   `json:"type"`
	Sent         int64    `json:"sent"`
	Received     int64    `json:"received"`
	Expected     *int64   `json:"expected"`
	DeliveredPct *float64 `json:"delivered_pct"`
	Own          int64    `json:"own"`
	Late         int64    `json:"late"`
	LatencyNs    struct {
		Count int64   `json:"count"`
		P50   float64 `json:"p50"`
		P99   float64 `json:"p99"`
	} `json:"latency_ns"`
	ErrorsByReason map[string]int64 `json:"errors_by_reason"`
}

type loadResult struct {
	Summary struct {
		Errors            int64            `json:"errors"`
		ErrorsByReason    map[string]int64 `json:"errors_by_reason"`
		UnmatchedMessages int64            `json:"unmatched_messages"`
		ConnectionsOpen   int64            `json:"connections_open"`
		Kinds             map[string]kind  `json:"kinds"`
	} `json:"summary"`
}

// TestCentrifugoScenario boots Centrifugo with the shipped config on a free
// loopback port and runs one `ceiling load --scenario script` with the
// shipped scenario file: 20 connections in rooms of 10, so 2 HTTP publishers
// (one per room) and 9 WebSocket subscribers per room.
func TestCentrifugoScenario(t *testing.T) {
	cf := findCentrifugo(t)
	root := repoRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	dir := t.TempDir()
	ceiling := filepath.Join(dir, "ceiling")
	build := exec.CommandContext(ctx, "go", "build", "-o", ceiling, "./cmd/ceiling")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/ceiling: %v\n%s", err, out)
	}

	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	var serverLog bytes.Buffer
	srv := exec.Command(cf, "--config", filepath.Join("benchmark", "targets", "centrifugo", "config.json"))
	srv.Dir = root
	srv.Env = append(os.Environ(),
		"CENTRIFUGO_HTTP_SERVER_ADDRESS=127.0.0.1",
		"CENTRIFUGO_HTTP_SERVER_PORT="+strconv.Itoa(port))
	srv.Stdout, srv.Stderr = &serverLog, &serverLog
	srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := srv.Start(); err != nil {
		t.Fatalf("start centrifugo: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	t.Cleanup(func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = srv.Process.Kill()
			<-exited
		}
	})

	// Ready when /health answers 2xx (the target file's probe).
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("centrifugo exited before it was ready: %v\n%s", err, serverLog.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("centrifugo not ready on %s after 15s\n%s", addr, serverLog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	out := filepath.Join(dir, "load.json")
	load := exec.CommandContext(ctx, ceiling, "load", "--scenario", "script",
		"--scenario-file", filepath.Join("benchmark", "scenarios", "centrifugo.json"),
		"--url", "ws://"+addr, "--connections", "20", "--duration", "3s", "--warmup", "1s",
		"--quiet", "--json", out)
	load.Dir = root
	if b, err := load.CombinedOutput(); err != nil {
		t.Fatalf("ceiling load: %v\n%s\nserver log:\n%s", err, b, serverLog.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res loadResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("load.json: %v", err)
	}
	s := res.Summary
	if s.ConnectionsOpen != 20 {
		t.Errorf("connections_open = %d, want 20", s.ConnectionsOpen)
	}
	if s.Errors != 0 || len(s.ErrorsByReason) != 0 {
		t.Errorf("errors = %d %v, want none", s.Errors, s.ErrorsByReason)
	}
	if s.UnmatchedMessages != 0 {
		t.Errorf("unmatched_messages = %d, want 0 (a push the file does not describe)", s.UnmatchedMessages)
	}

	pub, ok := s.Kinds["publish"]
	if !ok {
		t.Fatalf("no kind publish in %v", s.Kinds)
	}
	rel, ok := s.Kinds["pub"]
	if !ok {
		t.Fatalf("no kind pub in %v", s.Kinds)
	}
	if pub.Type != "send" || rel.Type != "relay" {
		t.Errorf("types: publish %q, pub %q; want send, relay", pub.Type, rel.Type)
	}
	// 2 publishers at 20/s over a 3 s window: about 120 publishes.
	if pub.Sent < 100 || pub.Sent > 140 {
		t.Errorf("publish.sent = %d, want about 120 (2 publishers x 20/s x 3s)", pub.Sent)
	}
	if rel.Sent != pub.Sent {
		t.Errorf("pub.sent = %d, publish.sent = %d: a relay's sent is its send's", rel.Sent, pub.Sent)
	}
	if rel.Expected == nil || *rel.Expected != 9*rel.Sent {
		t.Fatalf("pub.expected = %v, want 9 x sent = %d (9 other WebSocket members per room; the HTTP publisher is none)", rel.Expected, 9*rel.Sent)
	}
	if rel.Received <= 0 {
		t.Fatalf("pub.received = %d, want > 0\nserver log:\n%s", rel.Received, serverLog.String())
	}
	if rel.Received > *rel.Expected {
		t.Errorf("pub.received = %d > expected %d", rel.Received, *rel.Expected)
	}
	if rel.DeliveredPct == nil {
		t.Fatal("pub.delivered_pct is null with an expected count")
	}
	want := 100 * float64(rel.Received) / float64(*rel.Expected)
	if math.Abs(*rel.DeliveredPct-want) > 0.01 {
		t.Errorf("pub.delivered_pct = %v, want 100 x received/expected = %v", *rel.DeliveredPct, want)
	}
	// Centrifugo joins queued pushes into one frame, one per line; with
	// connect.split every one of them counts, so at this low rate all
	// arrive (an engine reading one message per frame lost 10% and more).
	if *rel.DeliveredPct < 99 {
		t.Errorf("pub.delivered_pct = %v, want >= 99", *rel.DeliveredPct)
	}
	if rel.LatencyNs.Count != rel.Received {
		t.Errorf("pub.latency_ns.count = %d, received = %d", rel.LatencyNs.Count, rel.Received)
	}
	if rel.LatencyNs.P50 <= 0 || rel.LatencyNs.P99 < rel.LatencyNs.P50 {
		t.Errorf("pub latency p50 %v p99 %v", rel.LatencyNs.P50, rel.LatencyNs.P99)
	}
	if rel.Own != 0 {
		t.Errorf("pub.own = %d: an HTTP publisher has no WebSocket to be echoed to", rel.Own)
	}
	t.Logf("centrifugo: publish sent %d; pub received %d of %d (%.2f%%), p50 %.2fms p99 %.2fms",
		pub.Sent, rel.Received, *rel.Expected, *rel.DeliveredPct, rel.LatencyNs.P50/1e6, rel.LatencyNs.P99/1e6)
}

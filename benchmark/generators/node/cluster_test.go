//go:build e2e

package nodegen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load/scenario/fanout"
	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
)

// fanoutArgs are a short fanout run's flags against urls, one --url each.
func fanoutArgs(urls []string, out string, connections string) []string {
	var args []string
	for _, u := range urls {
		args = append(args, "--url", u)
	}
	return append(args, "--scenario", "fanout", "--connections", connections, "--channels", "2", "--publishers", "2",
		"--batch", "10", "--record-size", "64", "--duration", "1s", "--warmup", "500ms",
		"--app-id", refserver.DefaultAppID, "--key", refserver.DefaultKey, "--secret", refserver.DefaultSecret,
		"--json", out, "--quiet")
}

// Fanout over three --url nodes of one cluster: subscribers split evenly
// over the servers, publishes go through every server in turn, and every
// server's subscribers receive what they were owed.
func testFanoutMultiURL(t *testing.T, node string) {
	nats := refservertest.StartNATS(t)
	var urls []string
	for range 3 {
		urls = append(urls, "ws://"+refservertest.Start(t, refserver.Config{Cluster: nats}).Addr)
	}
	out := filepath.Join(t.TempDir(), "load.json")
	code, stderr := runGen(t, node, 60*time.Second, fanoutArgs(urls, out, "12")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	r := readResult(t, out)
	if r.Config.URL != urls[0] || strings.Join(r.Config.URLs, " ") != strings.Join(urls, " ") {
		t.Errorf("config url %q, urls %q; want %q and all of %q", r.Config.URL, r.Config.URLs, urls[0], urls)
	}
	s := r.Summary
	if s.ConnectionsOpen != 12 || s.Errors != 0 || s.Failure != "" {
		t.Fatalf("summary %+v", s)
	}
	var f fanout.Summary
	if ok, err := s.Block("fanout", &f); !ok || err != nil {
		t.Fatalf("summary.fanout: %v %v", ok, err)
	}
	if len(f.Servers) != 3 {
		t.Fatalf("%d servers in summary.fanout.servers, want 3: %+v", len(f.Servers), f.Servers)
	}
	var expected int64
	for i, sv := range f.Servers {
		if sv.URL != urls[i] || sv.Connections != 4 || sv.Dropped != 0 || sv.Publishes <= 0 || sv.PublishFailures != 0 {
			t.Errorf("server %d: %+v; want %s with 4 connections and publishes", i, sv, urls[i])
		}
		if sv.Expected <= 0 || sv.Delivered != sv.Expected || sv.DeliveredPct == nil || *sv.DeliveredPct != 100 {
			t.Errorf("server %d: delivered %d of %d expected (pct %v)", i, sv.Delivered, sv.Expected, sv.DeliveredPct)
		}
		expected += sv.Expected
	}
	if expected != f.DeliveriesExpected || f.Delivered != f.DeliveriesExpected || f.DeliveredPct != 100 {
		t.Errorf("servers owed %d, deliveries_expected %d, delivered %d (%v%%)", expected, f.DeliveriesExpected, f.Delivered, f.DeliveredPct)
	}
	// 12 subscribers over 2 channels: every event has 6, 2 on each server.
	if f.DeliveriesExpected != 6*f.EventsPublished {
		t.Errorf("%d deliveries expected for %d events, want 6 each", f.DeliveriesExpected, f.EventsPublished)
	}
}

// Two refservers that are not one cluster fail the preflight: an event
// published through the first is not heard on the second.
func testFanoutPreflightNoCluster(t *testing.T, node string) {
	urls := []string{"ws://" + refservertest.Start(t, refserver.Config{}).Addr, "ws://" + refservertest.Start(t, refserver.Config{}).Addr}
	dir := t.TempDir()
	out := filepath.Join(dir, "load.json")
	args := append(fanoutArgs(urls, out, "4"), "--measure-marker", filepath.Join(dir, "marker"))
	code, stderr := runGen(t, node, 60*time.Second, args...)
	want := "published through " + urls[0] + ", not heard by the subscriber on " + urls[1] + ": are the --url servers nodes of one cluster?"
	if code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
	r := readResult(t, out)
	if s := r.Summary; !strings.Contains(s.Failure, want) || s.ConnectionsOpen != 0 || s.ErrorsByReason["preflight"] != 1 {
		t.Errorf("summary %+v: want the preflight's failure and no connection", s)
	}
	if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
		t.Errorf("measure marker created: the window must not open after a failed preflight")
	}
}

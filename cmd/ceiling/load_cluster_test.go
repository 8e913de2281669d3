package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
)

// TestLoadFanoutAcrossClusterNodes: three refserver nodes of one cluster,
// --url three times. Subscriber i is on node i mod 3, publishes rotate
// through the nodes, every node relays, and every node's subscribers get
// every event owed to them; the summary says each node's share.
func TestLoadFanoutAcrossClusterNodes(t *testing.T) {
	bus := refservertest.StartNATS(t)
	var nodes []*refservertest.Server
	var args []string
	for range 3 {
		n := refservertest.Start(t, refserver.Config{Cluster: bus})
		nodes = append(nodes, n)
		args = append(args, "--url", "ws://"+n.Addr)
	}
	report, r := runLoadJSON(t, append(args, "--scenario", "fanout", "--connections", "12", "--channels", "2",
		"--publishers", "2", "--duration", "1s", "--warmup", "200ms")...)
	checkCommon(t, r, "fanout", "closed", 12)
	f := fanoutOf(t, r)
	if f.EventsPublished == 0 || f.DeliveriesExpected != 6*f.EventsPublished || f.DeliveredPct != 100 {
		t.Errorf("published %d, expected %d (want 6 per event: 12 subscribers over 2 channels), delivered %v%%", f.EventsPublished, f.DeliveriesExpected, f.DeliveredPct)
	}
	if len(f.Servers) != 3 {
		t.Fatalf("servers %+v", f.Servers)
	}
	var pubs, owed int64
	for i, sv := range f.Servers {
		if sv.URL != "ws://"+nodes[i].Addr || sv.Connections != 4 || sv.Dropped != 0 || sv.PublishFailures != 0 {
			t.Errorf("server %d: %+v", i, sv)
		}
		// Every node took publishes, and its 4 subscribers (2 per
		// channel) were owed 2 of every event's 6 deliveries.
		if sv.Publishes == 0 || sv.Expected*3 != f.DeliveriesExpected || sv.Delivered != sv.Expected || sv.DeliveredPct == nil || *sv.DeliveredPct != 100 {
			t.Errorf("server %d: publishes %d, delivered %d of %d, want a third of %d", i, sv.Publishes, sv.Delivered, sv.Expected, f.DeliveriesExpected)
		}
		if sv.Before != nil || sv.After != nil {
			t.Errorf("server %d split without --split-at: %+v %+v", i, sv.Before, sv.After)
		}
		pubs += sv.Publishes
		owed += sv.Expected
		if st := nodes[i].Stats(); st.ClusterSent == 0 || st.ClusterReceived == 0 {
			t.Errorf("node %d relayed %d and received %d: the deliveries did not cross nodes", i, st.ClusterSent, st.ClusterReceived)
		}
	}
	if pubs != f.EventsPublished || owed != f.DeliveriesExpected {
		t.Errorf("servers' publishes %d (of %d), owed %d (of %d)", pubs, f.EventsPublished, owed, f.DeliveriesExpected)
	}
	if !strings.Contains(report, "server ws://"+nodes[2].Addr) || !strings.Contains(report, "4 conns (0 dropped)") {
		t.Errorf("report has no per-server rows:\n%s", report)
	}
}

// TestLoadFanoutNodesNotOneCluster: three servers that share nothing fail
// the preflight, which names the node published through and the one that
// did not hear it, and asks whether they are one cluster.
func TestLoadFanoutNodesNotOneCluster(t *testing.T) {
	a, b := startRefserver(t), startRefserver(t)
	var stdout, stderr bytes.Buffer
	err := run([]string{"load", "--scenario", "fanout", "--url", "ws://" + a, "--url", "ws://" + b, "--quiet", "--duration", "1s"}, &stdout, &stderr)
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("err %v (exit %d), want exit 1", err, exitCode(err))
	}
	for _, want := range []string{"preflight", "published through ws://" + a, "not heard by the subscriber on ws://" + b, "one cluster"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// TestLoadFanoutNodeLostMidWindow: node 2 of three shuts down halfway
// through the window (--split-at 0.5). Its subscribers are dropped, by
// server; after the split nothing more is owed to them; the other nodes'
// subscribers get every event published after it (publishes through the
// lost node fail, by server, and owe nothing).
func TestLoadFanoutNodeLostMidWindow(t *testing.T) {
	bus := refservertest.StartNATS(t)
	n1 := refservertest.Start(t, refserver.Config{Cluster: bus})
	n3 := refservertest.Start(t, refserver.Config{Cluster: bus})
	srv2, err := refserver.New(refserver.Config{Cluster: bus})
	if err != nil {
		t.Fatal(err)
	}
	l2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv2.Serve(l2)
	dir := t.TempDir()
	jsonPath, marker := filepath.Join(dir, "r.json"), filepath.Join(dir, "marker")
	const window = 2 * time.Second
	killed := make(chan time.Duration, 1)
	go func() {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if st, err := os.Stat(marker); err == nil {
				time.Sleep(time.Until(st.ModTime().Add(window / 2)))
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				srv2.Shutdown(ctx)
				cancel()
				killed <- time.Since(st.ModTime())
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		killed <- -1
	}()
	var stdout, stderr bytes.Buffer
	args := []string{"load", "--json", jsonPath, "--measure-marker", marker, "--quiet", "--scenario", "fanout",
		"--url", "ws://" + n1.Addr, "--url", "ws://" + l2.Addr().String(), "--url", "ws://" + n3.Addr,
		"--connections", "12", "--channels", "2", "--publishers", "2", "--duration", window.String(), "--warmup", "200ms", "--split-at", "0.5"}
	if err := run(args, &stdout, &stderr); err != nil && exitCode(err) != 1 {
		t.Fatalf("ceiling load: %v\n%s", err, stderr.String())
	}
	if at := <-killed; at < 0 {
		t.Fatal("no marker: node 2 was never shut down")
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var r load.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	f := fanoutOf(t, r)
	if f == nil || len(f.Servers) != 3 {
		t.Fatalf("fanout %+v", f)
	}
	if f.SplitAtNs != int64(window/2) {
		t.Errorf("split at %v, want %v", time.Duration(f.SplitAtNs), window/2)
	}
	lost := f.Servers[1]
	if lost.Dropped != 4 || lost.PublishFailures == 0 || lost.After == nil || lost.After.Expected >= lost.Before.Expected {
		t.Errorf("node 2: dropped %d of 4, %d publishes failed, owed before %+v after %+v", lost.Dropped, lost.PublishFailures, lost.Before, lost.After)
	}
	for _, i := range []int{0, 2} {
		sv := f.Servers[i]
		if sv.Dropped != 0 || sv.PublishFailures != 0 || sv.After == nil || sv.After.Expected == 0 || sv.After.DeliveredPct == nil || *sv.After.DeliveredPct < 99.9 {
			t.Errorf("node %d after the loss: %+v (after %+v)", i+1, sv, sv.After)
		}
	}
	if r.Summary.Dropped == nil || *r.Summary.Dropped != 4 {
		t.Errorf("summary dropped %v, want 4", r.Summary.Dropped)
	}
}

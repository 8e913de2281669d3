package refserver

import (
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	natsserver "github.com/nats-io/nats-server/v2/server"
)

// startNATS runs a NATS server (core only) on the loopback for the test.
func startNATS(t *testing.T) string {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready in 10 s")
	}
	return ns.ClientURL()
}

// TestClusterDeliversAcrossNodes: three nodes over one NATS server. An
// event published through node 3's REST API reaches a subscriber on node 1
// and one on node 3 (its own), each exactly once, and a node without a
// subscriber of the channel delivers nothing; the counters say what
// crossed.
func TestClusterDeliversAcrossNodes(t *testing.T) {
	url := startNATS(t)
	nodes := []*testServer{start(t, Config{Cluster: url}), start(t, Config{Cluster: url}), start(t, Config{Cluster: url})}
	c1, _ := nodes[0].connect(t)
	subscribe(t, c1, "room-1")
	c3, _ := nodes[2].connect(t)
	subscribe(t, c3, "room-1")
	c2, _ := nodes[1].connect(t)
	subscribe(t, c2, "elsewhere")

	body := mustJSON(t, map[string]any{"name": "bench", "channel": "room-1", "data": `{"ts":1}`})
	if code, msg := nodes[2].post(t, "/apps/"+nodes[2].cfg.AppID+"/events", body, nodes[2].cfg.Secret); code != 200 {
		t.Fatalf("publish to node 3: %d %s", code, msg)
	}
	for i, c := range []*websocketConn{{c1, "node 1"}, {c3, "node 3"}} {
		m := readMsg(t, c.c)
		if m.Event != "bench" || m.Channel != "room-1" || dataString(t, m) != `{"ts":1}` {
			t.Errorf("%d (%s): got %+v", i, c.name, m)
		}
		expectNothing(t, c.c) // once, not twice
	}
	expectNothing(t, c2)
	st := []Stats{nodes[0].Stats(), nodes[1].Stats(), nodes[2].Stats()}
	if st[2].ClusterSent != 1 || st[0].ClusterReceived != 1 || st[1].ClusterReceived != 1 || st[2].ClusterReceived != 0 {
		t.Errorf("cluster counters: sent %d/%d/%d, received %d/%d/%d; want node 3 to send 1 and the others to receive it",
			st[0].ClusterSent, st[1].ClusterSent, st[2].ClusterSent, st[0].ClusterReceived, st[1].ClusterReceived, st[2].ClusterReceived)
	}
	if st[0].Deliveries != 1 || st[1].Deliveries != 0 || st[2].Deliveries != 1 {
		t.Errorf("deliveries %d/%d/%d, want 1/0/1", st[0].Deliveries, st[1].Deliveries, st[2].Deliveries)
	}
}

type websocketConn struct {
	c    *websocket.Conn
	name string
}

// TestClusterBadURL: a cluster URL that is not nats:// is refused by New,
// and one nobody answers fails New within its timeout, naming it.
func TestClusterBadURL(t *testing.T) {
	if _, err := New(Config{Cluster: "http://127.0.0.1:4222"}); err == nil || !strings.Contains(err.Error(), "Cluster") {
		t.Errorf("http:// cluster: %v", err)
	}
	if _, err := New(Config{Cluster: "nats://127.0.0.1:1"}); err == nil || !strings.Contains(err.Error(), "nats://127.0.0.1:1") {
		t.Errorf("unreachable cluster: %v", err)
	}
}

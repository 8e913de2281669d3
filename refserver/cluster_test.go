package refserver

import (
	"bufio"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	// Node 2 hears the relay on its own time (no subscriber of its is
	// waiting for it): wait for that, then check it delivered nothing.
	waitFor(t, func() bool { return nodes[1].Stats().ClusterReceived > 0 })
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

// scriptedBus plays a cluster's NATS server to its nodes, over the wire
// protocol's few verbs they use: it answers the handshake and every PING
// at once, and notes in order each relay it is published ("pub") and
// each PONG, noted before it is sent ("pong").
type scriptedBus struct {
	ln    net.Listener
	mu    sync.Mutex
	notes []string
	conns []net.Conn
}

func startScriptedBus(t *testing.T) *scriptedBus {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &scriptedBus{ln: ln}
	t.Cleanup(func() {
		ln.Close()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, c := range b.conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.mu.Lock()
			b.conns = append(b.conns, c)
			b.mu.Unlock()
			go b.serve(c)
		}
	}()
	return b
}

func (b *scriptedBus) note(s string) {
	b.mu.Lock()
	b.notes = append(b.notes, s)
	b.mu.Unlock()
}

func (b *scriptedBus) noted() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.notes)
}

func (b *scriptedBus) serve(c net.Conn) {
	io.WriteString(c, `INFO {"server_id":"scripted","version":"2.10.0","proto":1,"headers":true,"max_payload":1048576}`+"\r\n")
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "PING":
			b.note("pong")
			io.WriteString(c, "PONG\r\n")
		case "PUB", "HPUB": // the payload's size is the last field
			n, _ := strconv.Atoi(f[len(f)-1])
			if _, err := io.CopyN(io.Discard, r, int64(n)+2); err != nil {
				return
			}
			b.note("pub")
		}
	}
}

// A node answers a publish once the bus has the event's relay: it
// flushes the relay (one PING the bus answers after it) before the 200.
// Once the relay could still sit in the NATS client's buffer when the
// node answered, so a node killed right after lost it (a resilience
// point called a healthy cluster degraded). The scripted bus notes the
// order on the wire; nothing waits on time.
func TestClusterAnswersAPublishOnceTheBusHasItsRelay(t *testing.T) {
	bus := startScriptedBus(t)
	node := start(t, Config{Cluster: "nats://" + bus.ln.Addr().String()})
	body := mustJSON(t, map[string]any{"name": "bench", "channel": "room-1", "data": `{"ts":1}`})
	if code, msg := node.post(t, "/apps/"+node.cfg.AppID+"/events", body, node.cfg.Secret); code != 200 {
		t.Fatalf("publish: %d %s", code, msg)
	}
	got := bus.noted()
	if i := slices.Index(got, "pub"); i < 0 || !slices.Contains(got[i:], "pong") {
		t.Errorf("the bus saw %q by the 200, want the relay (pub) and a pong after it", got)
	}
}

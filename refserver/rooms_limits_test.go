package refserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
)

// Over --rooms-rate-limit a message gets 429 rate_limited with the patch
// id, and the patch is not applied; presence is not counted.
func TestRoomsRateLimit(t *testing.T) {
	ts := start(t, Config{RoomsRateLimit: 1})
	// The join took a's one token.
	a, _ := ts.join(t, "r", "editor", "a", -1)
	v, _ := ts.join(t, "r", "viewer", "v", -1)
	before := ts.Stats()
	const n = 6
	began := time.Now()
	for i := range n {
		patch(t, a, fmt.Sprintf("p%d", i), int64(i), `"x"`)
	}
	var acked []uint64
	limited := 0
	for range n {
		switch m := readRoom(t, a); {
		case m.Type == "ack":
			acked = append(acked, m.V)
		case m.Type == "error" && m.Code == 429 && m.Reason == "rate_limited" && strings.HasPrefix(m.id(), "p"):
			limited++
		default:
			t.Fatalf("a got %+v, want ack or error 429 with the patch id", m)
		}
	}
	elapsed := time.Since(began)
	// One token a second: at most one ack per second that passed.
	if most := int(elapsed.Seconds()) + 1; len(acked) > most {
		t.Errorf("%d of %d patches acked within %s at 1/s", len(acked), n, elapsed)
	}
	if limited == 0 {
		t.Errorf("no patch limited (took %s)", elapsed)
	}
	// Only the acked patches were applied and relayed.
	var ops []uint64
	for _, m := range barrier(t, v) {
		if m.Type == "op" {
			ops = append(ops, m.V)
		}
	}
	if diff := cmp.Diff(acked, ops); diff != "" {
		t.Errorf("ops relayed vs patches acked (-acked +ops):\n%s", diff)
	}
	// Presence is not counted: with a's bucket empty it still reaches v,
	// and a gets no 429 for it.
	sendText(t, a, `{"type":"presence","ts":1}`)
	if m := readRoom(t, v); m.Type != "presence" || m.Users[0].ID != "a" {
		t.Errorf("viewer: %+v, want a's presence", m)
	}
	for _, m := range barrier(t, a) {
		t.Errorf("a got %+v after its presence", m)
	}
	if _, j := ts.join(t, "r", "viewer", "late", -1); j.Version != uint64(len(acked)) {
		t.Errorf("room version %d after %d acks", j.Version, len(acked))
	}
	if got := ts.stats.rateLimited.Load(); got < uint64(limited) {
		t.Errorf("rate-limited counter %d, want at least %d", got, limited)
	}
	if got := ts.Stats().MessagesIn - before.MessagesIn; got < n {
		t.Errorf("messages_in moved by %d, want at least %d", got, n)
	}
}

// --rooms-skip-every 3: every third accepted patch bumps the version by
// 2, and every member sees the same gap.
func TestRoomsSkipEvery(t *testing.T) {
	ts := start(t, Config{RoomsSkipEvery: 3})
	a, _ := ts.join(t, "r", "editor", "a", -1)
	v, _ := ts.join(t, "r", "viewer", "v", -1)
	var acks, ops []uint64
	for i := range 7 {
		patch(t, a, fmt.Sprintf("p%d", i), int64(i), "null")
		acks = append(acks, readRoom(t, a).V)
		ops = append(ops, readRoom(t, v).V)
	}
	want := []uint64{1, 2, 4, 5, 6, 8, 9}
	if diff := cmp.Diff(want, acks); diff != "" {
		t.Errorf("ack versions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, ops); diff != "" {
		t.Errorf("op versions (-want +got):\n%s", diff)
	}
}

// Bad input gets an error message and the connection stays open.
func TestRoomsErrors(t *testing.T) {
	ts := start(t, Config{})
	c := ts.dial(t, "/rooms")
	for _, tt := range []struct {
		send       string
		code       int
		reason, id string
	}{
		{`{"type":"patch","id":"x1","ts":1,"data":1}`, 400, "not_joined", "x1"},
		{`{"type":"presence","ts":1}`, 400, "not_joined", "<none>"},
		{`{"type":"nonsense"}`, 400, "not_joined", "<none>"},
		{`{"type":`, 400, "bad_json", "<none>"},
		{`{"type":"join","room":"r","role":"owner","id":"c"}`, 400, "bad_json", "<none>"},
		{`{"type":"join","room":"","role":"editor","id":"c"}`, 400, "bad_json", "<none>"},
		{`{"type":"join","room":"r","role":"editor"}`, 400, "bad_json", "<none>"},
		{`{"type":"join","room":"r","role":"editor","id":"c","since":-1}`, 400, "bad_json", "<none>"},
		{`{"type":"join","room":"r","role":"editor","id":"c","since":1.5}`, 400, "bad_json", "<none>"},
	} {
		sendText(t, c, "%s", tt.send)
		m := readRoom(t, c)
		if m.Type != "error" || m.Code != tt.code || m.Reason != tt.reason || m.id() != tt.id {
			t.Errorf("%s: got %+v, want error %d %s id %s", tt.send, m, tt.code, tt.reason, tt.id)
		}
	}
	if err := c.WriteMessage(websocket.BinaryMessage, []byte(`{"type":"join"}`)); err != nil {
		t.Fatal(err)
	}
	if m := readRoom(t, c); m.Type != "error" || m.Reason != "bad_json" {
		t.Errorf("binary message: %+v, want bad_json", m)
	}
	sendText(t, c, `{"type":"join","room":"r","role":"editor","id":"c"}`)
	if m := readRoom(t, c); m.Type != "joined" {
		t.Fatalf("join after errors: %+v", m)
	}
	for _, tt := range []struct {
		send       string
		code       int
		reason, id string
	}{
		{`{"type":"join","room":"r2","role":"editor","id":"c"}`, 400, "already_joined", "<none>"},
		{`{"type":"unsubscribe"}`, 400, "unknown_type", "<none>"},
		{`{"type":"patch","id":"p1","data":1}`, 400, "bad_json", "p1"},
		{`{"type":"patch","id":7,"ts":1}`, 400, "bad_json", "<none>"},
		{`{"type":"patch","id":"p2","ts":"soon"}`, 400, "bad_json", "<none>"},
		{`{"type":"presence"}`, 400, "bad_json", "<none>"},
	} {
		sendText(t, c, "%s", tt.send)
		m := readRoom(t, c)
		if m.Type != "error" || m.Code != tt.code || m.Reason != tt.reason || m.id() != tt.id {
			t.Errorf("%s: got %+v, want error %d %s id %s", tt.send, m, tt.code, tt.reason, tt.id)
		}
	}
	// Still open and in the room.
	patch(t, c, "ok", 1, "{}")
	if m := readRoom(t, c); m.Type != "ack" || m.V != 1 {
		t.Errorf("patch after errors: %+v, want ack v 1", m)
	}
}

// A member that stops reading is closed with 1008 once its queue is full;
// the editor and the other members are never held up by it.
func TestRoomsSlowConsumer1008(t *testing.T) {
	ts := start(t, Config{RoomsSendQueue: 16, RoomsRing: 8, RoomsRateLimit: 1_000_000, WriteTimeout: 10 * time.Second})
	d := websocket.Dialer{NetDial: func(network, addr string) (net.Conn, error) {
		c, err := net.Dial(network, addr)
		if err == nil {
			c.(*net.TCPConn).SetReadBuffer(64 << 10)
		}
		return c, err
	}}
	slow, resp, err := d.Dial("ws://"+ts.addr+"/rooms", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	t.Cleanup(func() { slow.Close() })
	sendText(t, slow, `{"type":"join","room":"r","role":"viewer","id":"slow"}`)
	if m := readRoom(t, slow); m.Type != "joined" {
		t.Fatalf("slow join: %+v", m)
	}
	a, _ := ts.join(t, "r", "editor", "a", -1)
	fast, _ := ts.join(t, "r", "viewer", "fast", -1)

	body := `"` + strings.Repeat("a", 64<<10) + `"`
	deadline := time.Now().Add(30 * time.Second)
	sent := 0
	for ts.Stats().SlowConsumerCloses == 0 {
		if time.Now().After(deadline) || sent >= 2000 {
			t.Fatalf("slow member never closed after %d patches of 64 KiB", sent)
		}
		// One at a time: the editor and the fast viewer keep up.
		patch(t, a, fmt.Sprintf("p%d", sent), int64(sent), body)
		sent++
		if m := readRoom(t, a); m.Type != "ack" || m.V != uint64(sent) {
			t.Fatalf("editor: %+v, want ack v %d", m, sent)
		}
		if m := readRoom(t, fast); m.Type != "op" || m.V != uint64(sent) {
			t.Fatalf("fast viewer: %+v, want op v %d", m, sent)
		}
	}
	if got := closeCode(t, slow); got != websocket.ClosePolicyViolation {
		t.Errorf("slow member close code %d, want 1008", got)
	}
	// The room goes on for the others.
	patch(t, a, "after", 1, "0")
	if m := readRoom(t, a); m.Type != "ack" {
		t.Errorf("editor after the close: %+v", m)
	}
	if m := readRoom(t, fast); m.Type != "op" {
		t.Errorf("fast viewer after the close: %+v", m)
	}
	waitFor(t, func() bool { return ts.Stats().RoomMembers == 2 })
}

// 200 clients that vanish without a close frame (half with a reset) leave
// no room or member behind, and the server goes on serving /health and
// new clients.
func TestRoomsAbruptDrops(t *testing.T) {
	ts := start(t, Config{RoomsPresenceBeat: 10 * time.Millisecond})
	keeper, _ := ts.join(t, "keep", "editor", "k", -1)
	const clients = 200
	conns := make([]*websocket.Conn, 0, clients)
	for i := range clients {
		c := ts.dial(t, "/rooms")
		sendText(t, c, `{"type":"join","room":"d%d","role":"editor","id":"c%d"}`, i%10, i)
		sendText(t, c, `{"type":"presence","ts":%d,"cursor":%d}`, i, i)
		sendText(t, c, `{"type":"patch","id":"p","ts":%d,"data":%d}`, i, i)
		conns = append(conns, c)
	}
	waitFor(t, func() bool { return ts.Stats().RoomMembers == clients+1 })
	for i, c := range conns {
		nc := c.NetConn().(*net.TCPConn)
		if i%2 == 0 {
			nc.SetLinger(0) // RST instead of FIN
		}
		nc.Close()
	}
	// The server still answers while it cleans up (bounded: a hung
	// server fails here instead of hanging the test).
	hc := http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get("http://" + ts.addr + "/health")
	if err != nil {
		t.Fatalf("/health while 200 clients drop: %v", err)
	}
	var st Stats
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || st.Goroutines == 0 {
		t.Errorf("/health while 200 clients drop: %v %+v", err, st)
	}
	waitFor(t, func() bool {
		st := ts.Stats()
		return st.Rooms == 1 && st.RoomMembers == 1 && st.Connections == 1
	})
	// The survivor's room is unaffected, and a newcomer starts a fresh room.
	patch(t, keeper, "k1", 1, "1")
	if m := readRoom(t, keeper); m.Type != "ack" || m.V != 1 {
		t.Errorf("keeper: %+v, want ack v 1", m)
	}
	n, j := ts.join(t, "d3", "editor", "new", -1)
	if j.Version != 0 || j.Members != 1 {
		t.Errorf("new client in a dropped room's name: %+v, want version 0 and 1 member", j)
	}
	patch(t, n, "n1", 1, "1")
	if m := readRoom(t, n); m.Type != "ack" || m.V != 1 {
		t.Errorf("new client: %+v, want ack v 1", m)
	}
}

// Shutdown closes /rooms members with 1012 and drops their rooms.
func TestRoomsShutdown(t *testing.T) {
	srv, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	ts := &testServer{Server: srv, addr: l.Addr().String()}
	c, _ := ts.join(t, "r", "editor", "a", -1)
	got := make(chan int, 1)
	go func() {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			_, _, err := c.ReadMessage()
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				got <- ce.Code
				return
			}
			if err != nil {
				got <- 0
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve: %v, want ErrServerClosed", err)
	}
	if code := <-got; code != websocket.CloseServiceRestart {
		t.Errorf("close code %d, want 1012", code)
	}
	if st := ts.Stats(); st.Rooms != 0 || st.RoomMembers != 0 {
		t.Errorf("after Shutdown: %d rooms, %d members", st.Rooms, st.RoomMembers)
	}
}

// A text frame that is not UTF-8 closes a /rooms socket with 1007, a
// message over --max-message-bytes with 1009; the room keeps going.
func TestRoomsBadFramesClose(t *testing.T) {
	ts := start(t, Config{MaxMessageBytes: 1024})
	a, _ := ts.join(t, "r", "editor", "a", -1)
	u, _ := ts.join(t, "r", "viewer", "u", -1)
	if err := u.WriteMessage(websocket.TextMessage, []byte("{\"type\":\"presence\",\"ts\":1,\"cursor\":\"\xff\"}")); err != nil {
		t.Fatal(err)
	}
	if got := closeCode(t, u); got != websocket.CloseInvalidFramePayloadData {
		t.Errorf("invalid UTF-8: close %d, want 1007", got)
	}
	big, _ := ts.join(t, "r", "viewer", "big", -1)
	if err := big.WriteMessage(websocket.TextMessage, []byte(`{"type":"presence","ts":1,"cursor":"`+strings.Repeat("x", 2048)+`"}`)); err != nil {
		t.Fatal(err)
	}
	if got := closeCode(t, big); got != websocket.CloseMessageTooBig {
		t.Errorf("oversized: close %d, want 1009", got)
	}
	waitFor(t, func() bool { return ts.Stats().RoomMembers == 1 })
	patch(t, a, "p", 1, "1")
	if m := readRoom(t, a); m.Type != "ack" || m.V != 1 {
		t.Errorf("editor after the closes: %+v", m)
	}
}

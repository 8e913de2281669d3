package refserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pusher"
	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
)

func TestConnectionEstablished(t *testing.T) {
	ts := start(t, Config{ActivityTimeout: 30 * time.Second})
	c := ts.dial(t, "/app/app-key?protocol=7")
	m := readMsg(t, c)
	var d pusher.ConnectionEstablishedData
	if err := json.Unmarshal([]byte(dataString(t, m)), &d); err != nil {
		t.Fatal(err)
	}
	if m.Event != pusher.EventConnectionEstablished || d.ActivityTimeout != 30 {
		t.Errorf("got %s %+v, want %s with activity_timeout 30", m.Event, d, pusher.EventConnectionEstablished)
	}
	var a, b int
	if _, err := fmt.Sscanf(d.SocketID, "%d.%d", &a, &b); err != nil {
		t.Errorf("socket_id %q is not N.N: %v", d.SocketID, err)
	}
}

func TestPingPong(t *testing.T) {
	ts := start(t, Config{})
	c, _ := ts.connect(t)
	if err := c.WriteMessage(websocket.TextMessage, pusher.AppendPing(nil)); err != nil {
		t.Fatal(err)
	}
	if m := readMsg(t, c); m.Event != pusher.EventPong {
		t.Errorf("got %q, want %q", m.Event, pusher.EventPong)
	}
	// A WebSocket-level ping is answered with a pong frame too. The
	// pusher:ping after it makes the server answer in order, so by the
	// time its pong message is read the pong frame has been handled.
	got := make(chan string, 1)
	c.SetPongHandler(func(p string) error { got <- p; return nil })
	if err := c.WriteControl(websocket.PingMessage, []byte("abc"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	c.WriteMessage(websocket.TextMessage, pusher.AppendPing(nil))
	if m := readMsg(t, c); m.Event != pusher.EventPong {
		t.Fatalf("got %q, want %q", m.Event, pusher.EventPong)
	}
	select {
	case p := <-got:
		if p != "abc" {
			t.Errorf("pong payload %q, want abc", p)
		}
	default:
		t.Error("no pong frame for a ping frame")
	}
}

// An event reaches exactly the subscribers of its channel, as the frame
// Pusher clients expect.
func TestFanOutReachesOnlyItsChannel(t *testing.T) {
	ts := start(t, Config{})
	a1, _ := ts.connect(t)
	a2, _ := ts.connect(t)
	b1, _ := ts.connect(t)
	subscribe(t, a1, "room-a")
	subscribe(t, a2, "room-a")
	subscribe(t, b1, "room-b")

	status, body := ts.post(t, "/apps/app-id/events",
		mustJSON(t, pusher.Event{Name: "tick", Channel: "room-a", Data: `{"n":1}`}), "app-secret")
	if status != 200 || body != "{}" {
		t.Fatalf("publish: %d %q, want 200 {}", status, body)
	}
	want := pusher.Message{Event: "tick", Channel: "room-a", Data: json.RawMessage(`"{\"n\":1}"`)}
	for i, c := range []*websocket.Conn{a1, a2} {
		if diff := cmp.Diff(want, readMsg(t, c)); diff != "" {
			t.Errorf("subscriber %d (-want +got):\n%s", i, diff)
		}
	}
	expectNothing(t, b1)
}

func TestBatchEventsAndChannels(t *testing.T) {
	ts := start(t, Config{})
	a, _ := ts.connect(t)
	b, _ := ts.connect(t)
	subscribe(t, a, "a")
	subscribe(t, b, "b")
	batch := pusher.BatchEvents{Batch: []pusher.Event{
		{Name: "e1", Channel: "a", Data: "1"},
		{Name: "e2", Channel: "b", Data: "2"},
		{Name: "e3", Channels: []string{"a", "b", "nobody"}, Data: "3"},
	}}
	if status, body := ts.post(t, "/apps/app-id/batch_events", mustJSON(t, batch), "app-secret"); status != 200 {
		t.Fatalf("batch: %d %q", status, body)
	}
	got := func(c *websocket.Conn, n int) []string {
		var s []string
		for range n {
			m := readMsg(t, c)
			s = append(s, m.Event+"@"+m.Channel+"="+dataString(t, m))
		}
		return s
	}
	if diff := cmp.Diff([]string{"e1@a=1", "e3@a=3"}, got(a, 2)); diff != "" {
		t.Errorf("channel a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"e2@b=2", "e3@b=3"}, got(b, 2)); diff != "" {
		t.Errorf("channel b (-want +got):\n%s", diff)
	}
}

func TestSocketIDExcluded(t *testing.T) {
	ts := start(t, Config{})
	a, idA := ts.connect(t)
	b, _ := ts.connect(t)
	subscribe(t, a, "c")
	subscribe(t, b, "c")
	ts.post(t, "/apps/app-id/events", mustJSON(t, pusher.Event{Name: "x", Channel: "c", Data: "d", SocketID: idA}), "app-secret")
	if m := readMsg(t, b); m.Event != "x" {
		t.Errorf("b got %q, want x", m.Event)
	}
	expectNothing(t, a)
}

func TestUnsubscribeStopsDelivery(t *testing.T) {
	ts := start(t, Config{})
	c, _ := ts.connect(t)
	subscribe(t, c, "c")
	if err := c.WriteMessage(websocket.TextMessage, pusher.AppendSubscribe(nil, "c", true)); err != nil {
		t.Fatal(err)
	}
	// The ping's pong proves the unsubscribe (sent before it) was handled.
	c.WriteMessage(websocket.TextMessage, pusher.AppendPing(nil))
	if m := readMsg(t, c); m.Event != pusher.EventPong {
		t.Fatalf("got %q, want pong", m.Event)
	}
	ts.post(t, "/apps/app-id/events", mustJSON(t, pusher.Event{Name: "x", Channel: "c", Data: "d"}), "app-secret")
	expectNothing(t, c)
	if st := ts.health(t); st.Channels != 0 || st.Subscriptions != 0 {
		t.Errorf("health after unsubscribe: channels %d, subscriptions %d; want 0, 0", st.Channels, st.Subscriptions)
	}
}

func TestUnknownKeyOrProtocol(t *testing.T) {
	tests := []struct {
		path string
		code int
	}{
		{"/app/wrong-key?protocol=7", pusher.CodeAppNotFound},
		{"/app/app-key", pusher.CodeNoProtocolVersion},
		{"/app/app-key?protocol=seven", pusher.CodeInvalidVersionFormat},
		{"/app/app-key?protocol=6", pusher.CodeUnsupportedProtocol},
	}
	ts := start(t, Config{})
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			c := ts.dial(t, tt.path)
			m := readMsg(t, c)
			var d pusher.ErrorData
			if err := json.Unmarshal(m.Data, &d); err != nil {
				t.Fatalf("error data %s: %v", m.Data, err)
			}
			if m.Event != pusher.EventError || d.Code == nil || *d.Code != tt.code || d.Message == "" {
				t.Errorf("got %s %s, want %s with code %d and a message", m.Event, m.Data, pusher.EventError, tt.code)
			}
			if got := closeCode(t, c); got != tt.code {
				t.Errorf("close code %d, want %d", got, tt.code)
			}
		})
	}
	// The server keeps serving well-formed clients.
	c, _ := ts.connect(t)
	subscribe(t, c, "still-ok")
}

// Malformed or unsupported client messages get pusher:error with a null
// code; the socket keeps working.
func TestBadClientMessagesKeepSocket(t *testing.T) {
	ts := start(t, Config{})
	c, _ := ts.connect(t)
	bad := []struct{ msg, wantIn string }{
		{`{not json`, "Invalid JSON"},
		{`{"data":{}}`, `Missing "event"`},
		{`{"event":"pusher:subscribe","data":{"channel":""}}`, "channel name missing"},
		{`{"event":"pusher:subscribe","data":{"channel":"a b"}}`, "outside"},
		{`{"event":"pusher:subscribe","data":{"channel":"private-x"}}`, "not supported"},
		{`{"event":"pusher:subscribe","data":42}`, "invalid data"},
		{`{"event":"client-typing","channel":"c","data":"{}"}`, "Unsupported event"},
	}
	for _, b := range bad {
		if err := c.WriteMessage(websocket.TextMessage, []byte(b.msg)); err != nil {
			t.Fatal(err)
		}
		m := readMsg(t, c)
		var d pusher.ErrorData
		if err := json.Unmarshal(m.Data, &d); err != nil {
			t.Fatalf("%s: error data %s: %v", b.msg, m.Data, err)
		}
		if m.Event != pusher.EventError || d.Code != nil || !strings.Contains(d.Message, b.wantIn) {
			t.Errorf("%s: got %s %s, want %s with null code and %q", b.msg, m.Event, m.Data, pusher.EventError, b.wantIn)
		}
	}
	// Still usable: subscribe (data as a string, as some clients send it) and receive.
	c.WriteMessage(websocket.TextMessage, []byte(`{"event":"pusher:subscribe","data":"{\"channel\":\"ok\"}"}`))
	if m := readMsg(t, c); m.Event != pusher.EventSubscriptionSucceeded {
		t.Fatalf("got %q, want subscription_succeeded", m.Event)
	}
	ts.post(t, "/apps/app-id/events", mustJSON(t, pusher.Event{Name: "x", Channel: "ok", Data: "d"}), "app-secret")
	if m := readMsg(t, c); m.Event != "x" {
		t.Errorf("got %q, want x", m.Event)
	}
}

// An oversized message closes that socket with 1009; others keep working,
// on /echo and on /app alike.
func TestOversizedMessage(t *testing.T) {
	ts := start(t, Config{MaxMessageBytes: 1024})
	for _, path := range []string{"/echo", "/app/app-key?protocol=7"} {
		t.Run(path, func(t *testing.T) {
			victim := ts.dial(t, path)
			other := ts.dial(t, "/echo")
			if err := victim.WriteMessage(websocket.TextMessage, make([]byte, 4096)); err != nil {
				t.Fatal(err)
			}
			if got := closeCode(t, victim); got != websocket.CloseMessageTooBig {
				t.Errorf("close code %d, want %d", got, websocket.CloseMessageTooBig)
			}
			other.WriteMessage(websocket.TextMessage, []byte("still here"))
			other.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, data, err := other.ReadMessage(); err != nil || string(data) != "still here" {
				t.Errorf("other socket: %q, %v", data, err)
			}
		})
	}
	// gorilla sends the 1009 before the read loop can count it: the count
	// is certain once each victim's handler has ended (the subtests
	// closed their sockets).
	waitFor(t, func() bool { return ts.Stats().Connections == 0 })
	if st := ts.health(t); st.OversizeCloses != 2 {
		t.Errorf("oversize_closes = %d, want 2", st.OversizeCloses)
	}
}

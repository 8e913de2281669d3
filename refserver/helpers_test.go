package refserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pusher"
	"github.com/gorilla/websocket"
)

// testServer is a real refserver on a kernel-chosen loopback port. Other
// packages use refservertest; this package's own tests cannot import it
// (an import cycle), so start keeps the same few lines here.
type testServer struct {
	*Server
	addr string // host:port
}

func start(t testing.TB, cfg Config) *testServer {
	t.Helper()
	return startWith(t, cfg, nil)
}

// startWith is start with set applied to the server before it serves
// (a test's clock, say): Serve's goroutine starts after it.
func startWith(t testing.TB, cfg Config, set func(*Server)) *testServer {
	t.Helper()
	srv, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if set != nil {
		set(srv)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return &testServer{Server: srv, addr: l.Addr().String()}
}

func (ts *testServer) dial(t *testing.T, path string) *websocket.Conn {
	t.Helper()
	return ts.dialTB(t, path)
}

func (ts *testServer) dialTB(t testing.TB, path string) *websocket.Conn {
	t.Helper()
	c, resp, err := websocket.DefaultDialer.Dial("ws://"+ts.addr+path, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	resp.Body.Close()
	t.Cleanup(func() { c.Close() })
	return c
}

// readMsg reads one Pusher message, failing after 5 s.
func readMsg(t *testing.T, c *websocket.Conn) pusher.Message {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, data, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var m pusher.Message
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("message %s is not JSON: %v", data, err)
	}
	return m
}

// dataString decodes a Message's data when it is a JSON string.
func dataString(t *testing.T, m pusher.Message) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(m.Data, &s); err != nil {
		t.Fatalf("data %s of %s is not a JSON string: %v", m.Data, m.Event, err)
	}
	return s
}

// connect opens /app/{key}?protocol=7 and checks connection_established.
func (ts *testServer) connect(t *testing.T) (*websocket.Conn, string) {
	t.Helper()
	c := ts.dial(t, "/app/"+ts.cfg.Key+"?protocol=7")
	m := readMsg(t, c)
	if m.Event != pusher.EventConnectionEstablished {
		t.Fatalf("first message %q, want %q", m.Event, pusher.EventConnectionEstablished)
	}
	var d pusher.ConnectionEstablishedData
	if err := json.Unmarshal([]byte(dataString(t, m)), &d); err != nil {
		t.Fatal(err)
	}
	return c, d.SocketID
}

func subscribe(t *testing.T, c *websocket.Conn, channel string) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, pusher.AppendSubscribe(nil, channel, false)); err != nil {
		t.Fatal(err)
	}
	m := readMsg(t, c)
	if m.Event != pusher.EventSubscriptionSucceeded || m.Channel != channel {
		t.Fatalf("got %s on %q, want %s on %q", m.Event, m.Channel, pusher.EventSubscriptionSucceeded, channel)
	}
}

// post sends a signed REST request and returns status and body.
func (ts *testServer) post(t *testing.T, path string, body []byte, secret string) (int, string) {
	t.Helper()
	q := pusher.Sign("POST", path, nil, ts.cfg.Key, secret, time.Now().Unix(), body)
	return ts.postRaw(t, path+"?"+q.Encode(), body)
}

func (ts *testServer) postRaw(t *testing.T, pathAndQuery string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post("http://"+ts.addr+pathAndQuery, "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("POST %s: %v", pathAndQuery, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// expectNothing checks that nothing was queued to c before now: a publish
// queues its frames before the REST call returns, so a pong asked for
// afterwards comes first unless something was delivered. (A read with a
// short deadline could not fail on a loaded machine: a stray delivery
// might just arrive after it.)
func expectNothing(t *testing.T, c *websocket.Conn) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, pusher.AppendPing(nil)); err != nil {
		t.Fatal(err)
	}
	if m := readMsg(t, c); m.Event != pusher.EventPong {
		t.Fatalf("unexpected message %+v before the pong", m)
	}
}

// closeCode reads until the server closes and returns the close code.
func closeCode(t *testing.T, c *websocket.Conn) int {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, _, err := c.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		t.Fatalf("read: %v, want a close frame", err)
	}
}

func (ts *testServer) health(t *testing.T) Stats {
	t.Helper()
	resp, err := http.Get("http://" + ts.addr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

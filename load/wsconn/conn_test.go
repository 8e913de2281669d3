package wsconn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
)

func TestEchoAgainstGorilla(t *testing.T) {
	t.Parallel()
	url := gorillaServer(t, websocket.Upgrader{}, echoHandler)
	c := dial(t, url, Options{})

	tests := []struct {
		name string
		op   Opcode
		size int
	}{
		{"empty text", OpText, 0},
		{"short text", OpText, 5},
		{"125 bytes", OpBinary, 125},
		{"126 bytes: 16-bit length", OpBinary, 126},
		{"odd length", OpText, 1001},
		{"65535 bytes", OpBinary, 65535},
		{"65536 bytes: 64-bit length", OpBinary, 65536},
	}
	for _, tt := range tests {
		p := bytes.Repeat([]byte("abcdefg"), tt.size/7+1)[:tt.size]
		if err := c.WriteMessage(tt.op, p); err != nil {
			t.Fatalf("%s: WriteMessage: %v", tt.name, err)
		}
		op, got, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("%s: ReadMessage: %v", tt.name, err)
		}
		if op != tt.op || !bytes.Equal(got, p) {
			t.Errorf("%s: got %v %d bytes, want %v %d bytes", tt.name, op, len(got), tt.op, len(p))
		}
	}
	if got, want := c.Messages(), int64(len(tests)); got != want {
		t.Errorf("Messages() = %d, want %d", got, want)
	}
	if c.Reads() < 1 {
		t.Errorf("Reads() = %d, want >= 1", c.Reads())
	}
}

func TestBatchIsOneWriteOfManyFrames(t *testing.T) {
	t.Parallel()
	url := gorillaServer(t, websocket.Upgrader{}, echoHandler)
	c := dial(t, url, Options{ReadBufferSize: 4096})
	var payloads [][]byte
	for i := range 100 {
		payloads = append(payloads, []byte(fmt.Sprintf("message %03d", i)))
	}
	for round := range 3 {
		if err := c.WriteBatch(OpText, payloads); err != nil {
			t.Fatal(err)
		}
		var got []string
		for range payloads {
			_, p, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			got = append(got, string(p))
		}
		var want []string
		for _, p := range payloads {
			want = append(want, string(p))
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("round %d (-want +got):\n%s", round, d)
		}
	}
}

func TestMessageLargerThanReadBuffer(t *testing.T) {
	t.Parallel()
	url := gorillaServer(t, websocket.Upgrader{}, echoHandler)
	c := dial(t, url, Options{ReadBufferSize: 4096})
	big := make([]byte, 1<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	for range 2 { // the second pass reuses the grown reassembly buffer
		if err := c.WriteMessage(OpBinary, big); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteMessage(OpText, []byte("after")); err != nil {
			t.Fatal(err)
		}
		op, got, err := c.ReadMessage()
		if err != nil || op != OpBinary || !bytes.Equal(got, big) {
			t.Fatalf("big: op %v, %d bytes, err %v", op, len(got), err)
		}
		op, got, err = c.ReadMessage()
		if err != nil || op != OpText || string(got) != "after" {
			t.Fatalf("after: op %v %q err %v", op, got, err)
		}
	}
}

func TestFragmentedFromGorilla(t *testing.T) {
	t.Parallel()
	// A small write buffer makes gorilla's NextWriter split a message into
	// many frames.
	msg := bytes.Repeat([]byte("0123456789"), 1000)
	url := gorillaServer(t, websocket.Upgrader{WriteBufferSize: 256}, func(ws *websocket.Conn) {
		for range 2 {
			w, err := ws.NextWriter(websocket.TextMessage)
			if err != nil {
				return
			}
			for i := 0; i < len(msg); i += 300 {
				w.Write(msg[i:min(i+300, len(msg))])
			}
			w.Close()
		}
		ws.ReadMessage() // hold the connection open
	})
	c := dial(t, url, Options{ReadBufferSize: 4096})
	for i := range 2 {
		op, got, err := c.ReadMessage()
		if err != nil || op != OpText || !bytes.Equal(got, msg) {
			t.Fatalf("message %d: op %v, %d bytes, err %v", i, op, len(got), err)
		}
	}
}

func TestFragmentedWithInterleavedPing(t *testing.T) {
	t.Parallel()
	var stream []byte
	stream = append(stream, serverFrame(false, OpBinary, []byte("hel"))...)
	stream = append(stream, serverFrame(true, OpPing, []byte("p1"))...)
	stream = append(stream, serverFrame(false, OpContinuation, []byte("lo "))...)
	stream = append(stream, serverFrame(true, OpPong, []byte("ignored"))...)
	stream = append(stream, serverFrame(true, OpContinuation, []byte("world"))...)
	stream = append(stream, serverFrame(true, OpText, []byte("next"))...)
	var out bytes.Buffer
	c := memConn(bytes.NewReader(stream), &out, Options{})

	op, p, err := c.ReadMessage()
	if err != nil || op != OpBinary || string(p) != "hello world" {
		t.Fatalf("got %v %q %v, want binary \"hello world\"", op, p, err)
	}
	op, p, err = c.ReadMessage()
	if err != nil || op != OpText || string(p) != "next" {
		t.Fatalf("got %v %q %v, want text \"next\"", op, p, err)
	}
	fin, rop, payload, rest := decodeClientFrame(t, out.Bytes())
	if !fin || rop != OpPong || string(payload) != "p1" || len(rest) != 0 {
		t.Errorf("reply = fin %v %v %q (+%d bytes), want one pong \"p1\"", fin, rop, payload, len(rest))
	}
}

func TestPingAnsweredWithPong(t *testing.T) {
	t.Parallel()
	pongs := make(chan string, 1)
	url := gorillaServer(t, websocket.Upgrader{}, func(ws *websocket.Conn) {
		ws.SetPongHandler(func(s string) error {
			pongs <- s
			return ws.WriteMessage(websocket.TextMessage, []byte("got pong"))
		})
		if err := ws.WriteControl(websocket.PingMessage, []byte("are you there"), time.Now().Add(time.Second)); err != nil {
			return
		}
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	})
	c := dial(t, url, Options{})
	_, p, err := c.ReadMessage() // answers the ping on the way
	if err != nil || string(p) != "got pong" {
		t.Fatalf("ReadMessage = %q, %v", p, err)
	}
	if got := <-pongs; got != "are you there" {
		t.Errorf("pong payload = %q, want the ping's", got)
	}
}

func TestServerClose(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		frame []byte
		want  CloseError
	}{
		{"code and text", websocket.FormatCloseMessage(4001, "App key not in this cluster"), CloseError{4001, "App key not in this cluster"}},
		{"service restart", websocket.FormatCloseMessage(1012, ""), CloseError{1012, ""}},
		{"no status", nil, CloseError{CloseNoStatusReceived, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			echoed := make(chan int, 1)
			url := gorillaServer(t, websocket.Upgrader{}, func(ws *websocket.Conn) {
				ws.WriteMessage(websocket.TextMessage, []byte("before"))
				ws.WriteControl(websocket.CloseMessage, tt.frame, time.Now().Add(time.Second))
				_, _, err := ws.ReadMessage()
				var ce *websocket.CloseError
				if errors.As(err, &ce) {
					echoed <- ce.Code
				}
				close(echoed)
			})
			c := dial(t, url, Options{})
			if _, p, err := c.ReadMessage(); err != nil || string(p) != "before" {
				t.Fatalf("first message = %q, %v", p, err)
			}
			_, _, err := c.ReadMessage()
			var ce *CloseError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *CloseError", err)
			}
			if d := cmp.Diff(tt.want, *ce); d != "" {
				t.Errorf("CloseError (-want +got):\n%s", d)
			}
			if _, _, err2 := c.ReadMessage(); err2 != err {
				t.Errorf("second ReadMessage err = %v, want the same sticky error", err2)
			}
			wantEcho := tt.want.Code
			if wantEcho == CloseNoStatusReceived {
				wantEcho = CloseNormalClosure
			}
			if got := <-echoed; got != wantEcho {
				t.Errorf("server saw close code %d, want %d", got, wantEcho)
			}
		})
	}
}

func TestClientCloseCodeReachesServer(t *testing.T) {
	t.Parallel()
	got := make(chan *websocket.CloseError, 1)
	url := gorillaServer(t, websocket.Upgrader{}, func(ws *websocket.Conn) {
		_, _, err := ws.ReadMessage()
		var ce *websocket.CloseError
		errors.As(err, &ce)
		got <- ce
	})
	c := dial(t, url, Options{})
	if err := c.CloseWithCode(4000, "done here"); err != nil {
		t.Fatal(err)
	}
	ce := <-got
	if ce == nil || ce.Code != 4000 || ce.Text != "done here" {
		t.Errorf("server saw %v, want close 4000 \"done here\"", ce)
	}
	if _, _, err := c.ReadMessage(); err == nil {
		t.Error("ReadMessage after Close succeeded")
	}
}

func TestDataRightAfterHandshakeIsKept(t *testing.T) {
	t.Parallel()
	established := `{"event":"pusher:connection_established","data":"{\"socket_id\":\"1.2\",\"activity_timeout\":120}"}`
	after := append(serverFrame(true, OpText, []byte(established)), serverFrame(true, OpText, []byte("second"))...)
	c := dial(t, rawServer(t, after), Options{})
	for _, want := range []string{established, "second"} {
		_, p, err := c.ReadMessage()
		if err != nil || string(p) != want {
			t.Fatalf("ReadMessage = %q, %v; want %q", p, err, want)
		}
	}
}

func TestDialErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url, want string
	}{
		{"wss refused", "wss://127.0.0.1:1/", "scheme must be ws://"},
		{"http refused", "http://127.0.0.1:1/", "scheme must be ws://"},
		{"no host", "ws:///path", "no host"},
		{"bad url", "ws://[::1", "url"},
	}
	for _, tt := range tests {
		_, err := Dial(context.Background(), tt.url, Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Dial(%q) = %v, want error containing %q", tt.name, tt.url, err, tt.want)
		}
	}
}

func TestHandshakeRejected(t *testing.T) {
	t.Parallel()
	c := dial(t, rawServer(t, nil), Options{}) // sanity: the raw server works
	c.Close()

	// A server answering 404 with a body.
	srv := gorillaServer(t, websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return false }}, echoHandler)
	_, err := Dial(context.Background(), srv, Options{Header: http.Header{"Origin": {"http://elsewhere.example"}}})
	var he *HandshakeError
	if !errors.As(err, &he) || he.Status != http.StatusForbidden {
		t.Fatalf("Dial = %v, want *HandshakeError with status 403", err)
	}
}

func TestHandshakeWrongAccept(t *testing.T) {
	t.Parallel()
	ln := newRawListener(t, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: bm90IHRoZSByaWdodCBrZXk=\r\n\r\n")
	_, err := Dial(context.Background(), ln, Options{})
	var he *HandshakeError
	if !errors.As(err, &he) || !strings.Contains(he.Reason, "Sec-WebSocket-Accept") {
		t.Fatalf("Dial = %v, want a HandshakeError about Sec-WebSocket-Accept", err)
	}
}

func TestHandshakeHonoursContext(t *testing.T) {
	t.Parallel()
	ln := newRawListener(t, "") // accepts, never answers
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := Dial(ctx, ln, Options{})
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Dial = %v, want a deadline error", err)
	}
}

// One writer goroutine and one reader goroutine share a Conn while the
// server pings all along: the reader's pongs and the writer's batches go
// through the write mutex (the race detector checks the rest).
func TestReaderWriterWithServerPings(t *testing.T) {
	t.Parallel()
	var pongs atomic.Int64
	url := gorillaServer(t, websocket.Upgrader{}, func(ws *websocket.Conn) {
		ws.SetPongHandler(func(string) error { pongs.Add(1); return nil })
		// One ping goes out before any echo, so the client reads it (and
		// answers it) before it reads an echo, however late the pinging
		// goroutine runs.
		if ws.WriteControl(websocket.PingMessage, []byte("hb"), time.Now().Add(time.Second)) != nil {
			return
		}
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
					if ws.WriteControl(websocket.PingMessage, []byte("hb"), time.Now().Add(time.Second)) != nil {
						return
					}
				}
			}
		}()
		echoHandler(ws)
	})
	c := dial(t, url, Options{ReadBufferSize: 4096})
	const rounds, batch = 200, 10
	payloads := make([][]byte, batch)
	for i := range payloads {
		payloads[i] = bytes.Repeat([]byte{byte('a' + i)}, 100)
	}
	writeErr := make(chan error, 1)
	go func() {
		for range rounds {
			if err := c.WriteBatch(OpBinary, payloads); err != nil {
				writeErr <- err
				return
			}
			time.Sleep(100 * time.Microsecond)
		}
		writeErr <- nil
	}()
	for i := range rounds * batch {
		_, p, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !bytes.Equal(p, payloads[i%batch]) {
			t.Fatalf("message %d = %q, want %q", i, p, payloads[i%batch])
		}
	}
	if err := <-writeErr; err != nil {
		t.Fatal(err)
	}
	// The first ping's pong was written before this message, so the
	// server has read it by the time it echoes this one.
	if err := c.WriteBatch(OpBinary, payloads[:1]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ReadMessage(); err != nil {
		t.Fatalf("last echo: %v", err)
	}
	if pongs.Load() == 0 {
		t.Error("server received no pong")
	}
}

// Shrink drops an idle connection's buffers; reads and writes after it
// work as before, and bytes already buffered are kept.
func TestShrink(t *testing.T) {
	t.Parallel()
	c := dial(t, gorillaServer(t, websocket.Upgrader{}, echoHandler), Options{})
	c.Shrink()
	if c.rbuf != nil || c.wbuf != nil || c.ctrl != nil {
		t.Fatal("buffers kept")
	}
	for _, msg := range []string{"one", strings.Repeat("x", 70000)} {
		if err := c.WriteMessage(OpText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		if _, p, err := c.ReadMessage(); err != nil || string(p) != msg {
			t.Fatalf("ReadMessage = %d bytes, %v", len(p), err)
		}
		c.Shrink()
	}

	// Unread bytes stay.
	c = dial(t, rawServer(t, append(serverFrame(true, OpText, []byte("a")), serverFrame(true, OpText, []byte("b"))...)), Options{})
	if _, p, err := c.ReadMessage(); err != nil || string(p) != "a" {
		t.Fatalf("ReadMessage = %q, %v", p, err)
	}
	c.Shrink()
	if _, p, err := c.ReadMessage(); err != nil || string(p) != "b" {
		t.Fatalf("after Shrink: ReadMessage = %q, %v", p, err)
	}
}

package evloop

import (
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load/wsconn"
	"github.com/gorilla/websocket"
)

// server is a gorilla server on loopback; handle runs per connection.
func server(t testing.TB, bufSize int, handle func(*websocket.Conn)) string {
	t.Helper()
	up := websocket.Upgrader{ReadBufferSize: bufSize, WriteBufferSize: bufSize}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	ended := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if ended {
			mu.Unlock()
			return
		}
		wg.Add(1)
		mu.Unlock()
		defer wg.Done()
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		go func() { <-done; c.Close() }() // unblock handle when the test ends
		handle(c)
	}))
	t.Cleanup(func() {
		mu.Lock()
		ended = true
		mu.Unlock()
		close(done)
		srv.Close()
		wg.Wait()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
}

// echoBack echoes every message as it came.
func echoBack(c *websocket.Conn) {
	for {
		op, p, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(op, p); err != nil {
			return
		}
	}
}

// rawEcho echoes frames without allocating (gorilla's ReadMessage
// allocates per message, which would hide the client's count): header,
// unmask, write back unmasked.
func rawEcho(c *websocket.Conn) {
	nc := c.NetConn()
	hdr := make([]byte, 14)
	buf := make([]byte, 1<<20)
	for {
		if _, err := io.ReadFull(nc, hdr[:2]); err != nil {
			return
		}
		n, h := int(hdr[1]&0x7f), 2
		switch n {
		case 126:
			if _, err := io.ReadFull(nc, hdr[2:4]); err != nil {
				return
			}
			n, h = int(binary.BigEndian.Uint16(hdr[2:4])), 4
		case 127:
			return // not needed here
		}
		if _, err := io.ReadFull(nc, hdr[h:h+4]); err != nil {
			return
		}
		mask := hdr[h : h+4]
		out := buf[:h+n]
		if _, err := io.ReadFull(nc, out[h:]); err != nil {
			return
		}
		for i := range n {
			out[h+i] ^= mask[i&3]
		}
		out[0], out[1] = hdr[0], hdr[1]&0x7f
		copy(out[2:h], hdr[2:h])
		if _, err := nc.Write(out); err != nil {
			return
		}
	}
}

var epoch = time.Now()

func mono() int64 { return int64(time.Since(epoch)) }

// handler is a Handler of functions; nil ones do nothing.
type handler struct {
	message func(c *Conn, op wsconn.Opcode, p []byte, now int64)
	timer   func(c *Conn, due, now int64)
	closed  func(c *Conn, err error)
}

func (h *handler) Message(c *Conn, op wsconn.Opcode, p []byte, now int64) {
	if h.message != nil {
		h.message(c, op, p, now)
	}
}

func (h *handler) Timer(c *Conn, due, now int64) {
	if h.timer != nil {
		h.timer(c, due, now)
	}
}

func (h *handler) Closed(c *Conn, err error) {
	if h.closed != nil {
		h.closed(c, err)
	}
}

// engine makes an engine of loops loops draining at drain from now, with
// conns connections to url all on h.
func engine(t testing.TB, url string, loops, conns int, drain time.Duration, h Handler) (*Engine, []*Conn) {
	t.Helper()
	cfg := Config{Now: mono, Drain: mono() + int64(drain), Loops: loops}
	cfg.Window.Start, cfg.Window.End = mono(), mono()+int64(drain)
	return engineOf(t, cfg, url, conns, h)
}

// engineOf makes an engine of cfg with conns connections to url on h.
func engineOf(t testing.TB, cfg Config, url string, conns int, h Handler) (*Engine, []*Conn) {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var cs []*Conn
	for range conns {
		ws, err := wsconn.Dial(context.Background(), url, wsconn.Options{ReadBufferSize: 4 << 10, WriteBufferSize: 512})
		if err != nil {
			e.Run(cancelled())
			t.Fatal(err)
		}
		c, err := e.Add(ws, h)
		if err != nil {
			e.Run(cancelled())
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	return e, cs
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// runFor runs e, failing the test if it takes longer than limit.
func runFor(t testing.TB, e *Engine, ctx context.Context, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("Run still running after %v", limit)
	}
	return time.Since(start)
}

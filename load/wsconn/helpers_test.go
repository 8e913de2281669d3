package wsconn

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// serverFrame encodes one unmasked server-to-client frame.
func serverFrame(fin bool, op Opcode, payload []byte) []byte {
	b0 := byte(op)
	if fin {
		b0 |= 0x80
	}
	n := len(payload)
	var out []byte
	switch {
	case n <= 125:
		out = []byte{b0, byte(n)}
	case n <= 0xFFFF:
		out = []byte{b0, 126, byte(n >> 8), byte(n)}
	default:
		out = []byte{b0, 127}
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	return append(out, payload...)
}

// decodeClientFrame parses one masked client frame, independently of
// read.go, and returns the unmasked payload and the rest.
func decodeClientFrame(t *testing.T, b []byte) (fin bool, op Opcode, payload, rest []byte) {
	t.Helper()
	if len(b) < 2 {
		t.Fatalf("frame too short: %d bytes", len(b))
	}
	fin, op = b[0]&0x80 != 0, Opcode(b[0]&0x0F)
	if b[1]&0x80 == 0 {
		t.Fatalf("client frame not masked")
	}
	n, h := int(b[1]&0x7F), 2
	switch n {
	case 126:
		n, h = int(binary.BigEndian.Uint16(b[2:])), 4
	case 127:
		n, h = int(binary.BigEndian.Uint64(b[2:])), 10
	}
	mask := b[h : h+4]
	payload = make([]byte, n)
	for i := range n {
		payload[i] = b[h+4+i] ^ mask[i%4]
	}
	return fin, op, payload, b[h+4+n:]
}

// memConn is a Conn over an in-memory reader and writer.
func memConn(r io.Reader, w io.Writer, opts Options) *Conn {
	return newConn(nil, r, w, opts)
}

// loopReader replays buf forever: the steady state of a streaming server.
type loopReader struct {
	buf []byte
	off int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], l.buf[l.off:])
		n += k
		l.off = (l.off + k) % len(l.buf)
	}
	return n, nil
}

// gorillaServer starts a gorilla/websocket server on loopback running
// handle for each connection; gorilla is the independent implementation
// that checks our framing.
func gorillaServer(t *testing.T, up websocket.Upgrader, handle func(*websocket.Conn)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		handle(ws)
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func echoHandler(ws *websocket.Conn) {
	for {
		mt, p, err := ws.ReadMessage()
		if err != nil {
			return
		}
		if err := ws.WriteMessage(mt, p); err != nil {
			return
		}
	}
}

func dial(t *testing.T, url string, opts Options) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, url, opts)
	if err != nil {
		t.Fatalf("Dial(%s): %v", url, err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	return c
}

// serveRaw runs handle for every request on a plain TCP listener on
// loopback, with the connection closed when handle returns or the test ends.
func serveRaw(t *testing.T, handle func(nc net.Conn, req *http.Request, done <-chan struct{})) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
				req, err := http.ReadRequest(bufio.NewReader(nc))
				if err != nil {
					return
				}
				handle(nc, req, done)
			}()
		}
	}()
	return "ws://" + ln.Addr().String() + "/"
}

// rawServer answers the upgrade and then writes after (frames) in the same
// write as the 101 response.
func rawServer(t *testing.T, after []byte) string {
	t.Helper()
	return serveRaw(t, func(nc net.Conn, req *http.Request, done <-chan struct{}) {
		resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			acceptKey(req.Header.Get("Sec-WebSocket-Key")) + "\r\n\r\n"
		if _, err := nc.Write(append([]byte(resp), after...)); err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, nc)
	})
}

// newRawListener answers every request with the fixed response (nothing if
// empty) and holds the connection until the test ends.
func newRawListener(t *testing.T, response string) string {
	t.Helper()
	return serveRaw(t, func(nc net.Conn, _ *http.Request, done <-chan struct{}) {
		if response != "" {
			nc.Write([]byte(response))
		}
		<-done
	})
}

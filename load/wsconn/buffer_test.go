package wsconn

import (
	"bytes"
	"io"
	"testing"
)

// oneFrameReader returns one frame per Read: a server sending small
// messages at a low rate, each read finding one.
type oneFrameReader struct{ frame []byte }

func (r oneFrameReader) Read(p []byte) (int, error) { return copy(p, r.frame), nil }

// The read buffer grows only as the traffic needs: small messages one per
// read keep the 4 KiB it starts with (ten thousand such connections hold
// 4 KiB each, not ReadBufferSize), a stream that fills every read takes it
// to ReadBufferSize within a few reads, and a frame that does not fit grows
// it to hold the frame instead of going through the reassembly buffer.
func TestReadBufferGrowsWithTheTraffic(t *testing.T) {
	small := serverFrame(true, OpText, bytes.Repeat([]byte("s"), 64))
	c := memConn(oneFrameReader{small}, io.Discard, Options{})
	for i := range 100 {
		if _, p, err := c.ReadMessage(); err != nil || len(p) != 64 {
			t.Fatalf("message %d: %d bytes, %v", i, len(p), err)
		}
	}
	if len(c.rbuf) != handshakeBuffer {
		t.Errorf("after 100 small messages one per read: read buffer %d bytes, want the initial %d", len(c.rbuf), handshakeBuffer)
	}

	c = memConn(&loopReader{buf: small}, io.Discard, Options{})
	for i := range 20000 {
		if _, _, err := c.ReadMessage(); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if len(c.rbuf) != DefaultReadBufferSize {
		t.Errorf("streaming: read buffer %d bytes, want ReadBufferSize %d", len(c.rbuf), DefaultReadBufferSize)
	}

	big := bytes.Repeat([]byte("b"), 100<<10)
	c = memConn(bytes.NewReader(serverFrame(true, OpBinary, big)), io.Discard, Options{})
	op, p, err := c.ReadMessage()
	if err != nil || op != OpBinary || !bytes.Equal(p, big) {
		t.Fatalf("100 KiB frame: op %v, %d bytes, %v", op, len(p), err)
	}
	if len(c.rbuf) < len(big) || c.frag != nil {
		t.Errorf("100 KiB frame: read buffer %d bytes, reassembly buffer %d: want it read in the grown read buffer", len(c.rbuf), cap(c.frag))
	}
}

// A read buffer released while idle (nil, nothing unread) comes back,
// small, on the next ReadMessage.
func TestReadAfterBufferReleased(t *testing.T) {
	small := serverFrame(true, OpText, []byte("hi"))
	c := memConn(oneFrameReader{small}, io.Discard, Options{})
	if _, p, err := c.ReadMessage(); err != nil || string(p) != "hi" {
		t.Fatalf("first: %q, %v", p, err)
	}
	c.rbuf, c.r, c.w = nil, 0, 0
	if _, p, err := c.ReadMessage(); err != nil || string(p) != "hi" {
		t.Fatalf("after release: %q, %v", p, err)
	}
	if len(c.rbuf) != handshakeBuffer {
		t.Errorf("read buffer after release: %d bytes, want %d", len(c.rbuf), handshakeBuffer)
	}
}

package wsconn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendFrameRoundTrip(t *testing.T) {
	t.Parallel()
	c := memConn(bytes.NewReader(nil), io.Discard, Options{})
	var buf []byte
	var want [][]byte
	for _, n := range []int{0, 1, 3, 4, 7, 8, 9, 31, 32, 33, 125, 126, 127, 1000, 65535, 65536, 70000} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(i*31 + n)
		}
		orig := bytes.Clone(p)
		buf = c.AppendFrame(buf, OpBinary, p)
		if !bytes.Equal(p, orig) {
			t.Fatalf("AppendFrame modified the caller's %d-byte payload", n)
		}
		want = append(want, p)
	}
	rest := buf
	for i, w := range want {
		var fin bool
		var op Opcode
		var got []byte
		fin, op, got, rest = decodeClientFrame(t, rest)
		if !fin || op != OpBinary || !bytes.Equal(got, w) {
			t.Errorf("frame %d: fin %v op %v, payload equal %v (len %d want %d)", i, fin, op, bytes.Equal(got, w), len(got), len(w))
		}
	}
	if len(rest) != 0 {
		t.Errorf("%d bytes left over", len(rest))
	}
}

func TestMaskKeysDiffer(t *testing.T) {
	t.Parallel()
	c := memConn(bytes.NewReader(nil), io.Discard, Options{})
	seen := map[uint32]bool{}
	for range 1000 {
		f := c.AppendFrame(nil, OpText, nil)
		seen[binary.LittleEndian.Uint32(f[2:])] = true
	}
	if len(seen) < 990 {
		t.Errorf("%d distinct mask keys in 1000 frames", len(seen))
	}
}

func TestProtocolErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		stream    []byte
		opts      Options
		wantClose int
	}{
		{"masked server frame", []byte{0x81, 0x81, 1, 2, 3, 4, 'x'}, Options{}, CloseProtocolError},
		{"RSV1 set", []byte{0xC1, 0x01, 'x'}, Options{}, CloseProtocolError},
		{"reserved opcode", []byte{0x83, 0x00}, Options{}, CloseProtocolError},
		{"fragmented ping", []byte{0x09, 0x00}, Options{}, CloseProtocolError},
		{"long ping", append([]byte{0x89, 126, 0, 126}, make([]byte, 126)...), Options{}, CloseProtocolError},
		{"continuation first", []byte{0x80, 0x00}, Options{}, CloseProtocolError},
		{"text inside fragments", []byte{0x01, 0x01, 'a', 0x81, 0x01, 'b'}, Options{}, CloseProtocolError},
		{"one-byte close", []byte{0x88, 0x01, 3}, Options{}, CloseProtocolError},
		{"too big", append([]byte{0x82, 126, 0x10, 0x01}, make([]byte, 4097)...), Options{MaxMessageSize: 4096}, CloseMessageTooBig},
		{"too big in fragments", append(append([]byte{0x02, 126, 0x0C, 0x00}, make([]byte, 3072)...), append([]byte{0x80, 126, 0x04, 0x00}, make([]byte, 1024)...)...), Options{MaxMessageSize: 4000}, CloseMessageTooBig},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		c := memConn(bytes.NewReader(tt.stream), &out, tt.opts)
		_, _, err := c.ReadMessage()
		var pe *ProtocolError
		if !errors.As(err, &pe) {
			t.Errorf("%s: err = %v, want *ProtocolError", tt.name, err)
			continue
		}
		_, op, payload, _ := decodeClientFrame(t, out.Bytes())
		if op != OpClose || len(payload) < 2 || int(binary.BigEndian.Uint16(payload)) != tt.wantClose {
			t.Errorf("%s: sent %v %v, want close %d", tt.name, op, payload, tt.wantClose)
		}
	}
}

func TestTruncatedStream(t *testing.T) {
	t.Parallel()
	full := serverFrame(true, OpText, []byte("hello"))
	for n := 1; n < len(full); n++ {
		c := memConn(bytes.NewReader(full[:n]), io.Discard, Options{})
		_, _, err := c.ReadMessage()
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut at %d: err = %v, want io.ErrUnexpectedEOF", n, err)
		}
	}
	c := memConn(bytes.NewReader(nil), io.Discard, Options{})
	if _, _, err := c.ReadMessage(); !errors.Is(err, io.EOF) {
		t.Errorf("empty stream: err = %v, want io.EOF", err)
	}
}

// oneByteReader returns one byte per Read: the worst case for the parser's
// buffer management.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p[:1]) }

func TestParsesAcrossReadBoundaries(t *testing.T) {
	t.Parallel()
	var stream []byte
	var want []string
	for i := range 300 {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, i*37%5000)
		stream = append(stream, serverFrame(true, OpText, p)...)
		want = append(want, string(p))
	}
	for _, r := range []io.Reader{bytes.NewReader(stream), oneByteReader{bytes.NewReader(stream)}} {
		c := memConn(r, io.Discard, Options{ReadBufferSize: 4096})
		var got []string
		for range want {
			_, p, err := c.ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(p))
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	}
}

func TestNoAllocationPerMessage(t *testing.T) {
	payload := bytes.Repeat([]byte("x"), 64)
	var stream []byte
	for range 1000 {
		stream = append(stream, serverFrame(true, OpText, payload)...)
	}
	c := memConn(&loopReader{buf: stream}, io.Discard, Options{})
	if n := testing.AllocsPerRun(10000, func() {
		if _, _, err := c.ReadMessage(); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("ReadMessage: %v allocations per message, want 0", n)
	}

	// Fragmented messages reuse the reassembly buffer once it has grown.
	frag := append(serverFrame(false, OpBinary, payload), serverFrame(true, OpContinuation, payload)...)
	c = memConn(&loopReader{buf: frag}, io.Discard, Options{})
	if n := testing.AllocsPerRun(1000, func() { c.ReadMessage() }); n != 0 {
		t.Errorf("fragmented ReadMessage: %v allocations per message, want 0", n)
	}

	w := memConn(bytes.NewReader(nil), io.Discard, Options{})
	batch := make([][]byte, 100)
	for i := range batch {
		batch[i] = payload
	}
	if n := testing.AllocsPerRun(1000, func() {
		if err := w.WriteBatch(OpText, batch); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("WriteBatch: %v allocations per batch, want 0", n)
	}
	var buf []byte
	buf = w.AppendFrame(buf, OpText, payload)
	if n := testing.AllocsPerRun(1000, func() {
		buf = w.AppendFrame(buf[:0], OpText, payload)
		w.Write(buf)
	}); n != 0 {
		t.Errorf("AppendFrame+Write: %v allocations, want 0", n)
	}
}

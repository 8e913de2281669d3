package wsconn

import (
	"bytes"
	"io"
	"testing"
)

// FuzzReadMessage feeds arbitrary bytes to the frame parser: it must never
// panic, never return a message above MaxMessageSize, and only return data
// opcodes. `go test` runs the seeds; `go test -fuzz=FuzzReadMessage` explores.
func FuzzReadMessage(f *testing.F) {
	f.Add(serverFrame(true, OpText, []byte("hello")))
	f.Add(append(serverFrame(false, OpBinary, []byte("ab")), serverFrame(true, OpContinuation, []byte("cd"))...))
	f.Add(serverFrame(true, OpBinary, make([]byte, 300)))
	f.Add(serverFrame(true, OpBinary, make([]byte, 70000)))
	f.Add(serverFrame(true, OpPing, []byte("p")))
	f.Add(serverFrame(true, OpClose, []byte{0x03, 0xE8, 'b', 'y', 'e'}))
	f.Add([]byte{0x82, 127, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF})
	f.Add([]byte{0x82, 127, 0, 0, 0, 0, 0, 0x10, 0, 0})
	f.Add([]byte{0x81, 0xFE, 0, 0})
	const maxMsg = 1 << 16
	f.Fuzz(func(t *testing.T, data []byte) {
		c := memConn(bytes.NewReader(data), io.Discard, Options{ReadBufferSize: 4096, MaxMessageSize: maxMsg})
		for range 1000 {
			op, p, err := c.ReadMessage()
			if err != nil {
				return
			}
			if op != OpText && op != OpBinary {
				t.Fatalf("returned opcode %v", op)
			}
			if len(p) > maxMsg {
				t.Fatalf("returned %d bytes, limit %d", len(p), maxMsg)
			}
		}
	})
}

// FuzzFragmentRoundTrip splits a payload into server frames at fuzzed
// points and checks the reassembled message is the payload.
func FuzzFragmentRoundTrip(f *testing.F) {
	f.Add([]byte("hello, world"), []byte{3, 5})
	f.Add(bytes.Repeat([]byte("z"), 9000), []byte{200, 1, 0})
	f.Fuzz(func(t *testing.T, payload, cuts []byte) {
		var stream []byte
		rest, op := payload, OpBinary
		for _, cut := range cuts {
			n := min(int(cut)*37, len(rest))
			stream = append(stream, serverFrame(false, op, rest[:n])...)
			rest, op = rest[n:], OpContinuation
		}
		stream = append(stream, serverFrame(true, op, rest)...)
		c := memConn(bytes.NewReader(stream), io.Discard, Options{ReadBufferSize: 4096})
		gotOp, got, err := c.ReadMessage()
		if err != nil || gotOp != OpBinary || !bytes.Equal(got, payload) {
			t.Fatalf("got %v, %d bytes, %v; want binary %d bytes", gotOp, len(got), err, len(payload))
		}
	})
}

// FuzzDataFrame checks DataFrame against ParseHeader: every frame it takes,
// ParseHeader parses to the same final data frame, whole in b, and it
// takes every such frame with a 2- or 4-byte header.
func FuzzDataFrame(f *testing.F) {
	f.Add(serverFrame(true, OpText, []byte("hello")))
	f.Add(serverFrame(true, OpBinary, make([]byte, 256)))
	f.Add(serverFrame(true, OpBinary, make([]byte, 65535)))
	f.Add(serverFrame(true, OpBinary, make([]byte, 70000)))
	f.Add(serverFrame(false, OpBinary, []byte("ab")))
	f.Add(serverFrame(true, OpPing, []byte("p")))
	f.Add(serverFrame(true, OpText, make([]byte, 300))[:100])
	f.Add([]byte{0x81, 0xFE, 0, 0})
	f.Add([]byte{0xC1, 0x01, 'x'})
	f.Add([]byte{0x81})
	f.Fuzz(func(t *testing.T, b []byte) {
		op, p, n, ok := DataFrame(b)
		h, need, err := ParseHeader(b)
		whole := err == nil && need == 0 && uint64(len(b)) >= uint64(h.HeaderLen)+h.PayloadLen
		isData := whole && h.Fin && (h.Op == OpText || h.Op == OpBinary) && h.HeaderLen <= 4 // a 64-bit length is the slow path
		if ok != isData {
			t.Fatalf("DataFrame ok %v, ParseHeader %+v need %d err %v on % x", ok, h, need, err, b[:min(len(b), 12)])
		}
		if ok && (op != h.Op || n != h.HeaderLen+int(h.PayloadLen) || len(p) != int(h.PayloadLen) || !bytes.Equal(p, b[h.HeaderLen:n])) {
			t.Fatalf("DataFrame op %v n %d len %d; ParseHeader %+v", op, n, len(p), h)
		}
	})
}

package wsconn

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkReadMessage parses 64-byte messages from an in-memory stream:
// the parser's cost without the kernel's.
func BenchmarkReadMessage(b *testing.B) {
	payload := bytes.Repeat([]byte("x"), 64)
	var stream []byte
	for range 4096 {
		stream = append(stream, serverFrame(true, OpText, payload)...)
	}
	c := memConn(&loopReader{buf: stream}, io.Discard, Options{})
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		if _, _, err := c.ReadMessage(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteBatch frames 100 64-byte messages into one write to
// io.Discard; one op is one batch.
func BenchmarkWriteBatch(b *testing.B) {
	payload := bytes.Repeat([]byte("x"), 64)
	batch := make([][]byte, 100)
	for i := range batch {
		batch[i] = payload
	}
	c := memConn(bytes.NewReader(nil), io.Discard, Options{})
	b.ReportAllocs()
	b.SetBytes(int64(len(payload) * len(batch)))
	for b.Loop() {
		if err := c.WriteBatch(OpText, batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendFrame256 frames one 256-byte message (a fresh mask, the
// payload copied and masked): the generator's cost per message sent.
func BenchmarkAppendFrame256(b *testing.B) {
	payload := bytes.Repeat([]byte("x"), 256)
	c := memConn(bytes.NewReader(nil), io.Discard, Options{})
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		buf = c.AppendFrame(buf[:0], OpBinary, payload)
	}
}

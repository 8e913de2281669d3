package refserver

import (
	"bytes"
	"testing"

	"github.com/gorilla/websocket"
)

func TestEchoSameOpcode(t *testing.T) {
	ts := start(t, Config{})
	c := ts.dial(t, "/echo")
	msgs := []struct {
		op   int
		data []byte
	}{
		{websocket.TextMessage, []byte("hello")},
		{websocket.BinaryMessage, []byte{0, 1, 2, 0xff}},
		{websocket.TextMessage, bytes.Repeat([]byte("x"), 70000)}, // 64-bit length
		{websocket.BinaryMessage, nil},
	}
	// Pipelined: all sent before any is read back.
	for _, m := range msgs {
		if err := c.WriteMessage(m.op, m.data); err != nil {
			t.Fatal(err)
		}
	}
	for i, m := range msgs {
		op, data, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if op != m.op || !bytes.Equal(data, m.data) {
			t.Errorf("message %d: got opcode %d, %d bytes; want %d, %d bytes", i, op, len(data), m.op, len(m.data))
		}
	}
}

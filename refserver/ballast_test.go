package refserver

import (
	"bytes"
	"testing"
)

// Every socket keeps ConnBallast bytes while it is open, each written
// (so resident): an echo and a Pusher socket alike.
func TestConnBallastIsHeldPerSocket(t *testing.T) {
	ts := start(t, Config{ConnBallast: 4096})
	c := ts.dial(t, "/echo")
	if err := c.WriteMessage(1, []byte("x")); err != nil { // past the upgrade: tracked
		t.Fatal(err)
	}
	if _, _, err := c.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	ts.connect(t) // a Pusher socket
	ts.mu.Lock()
	var held [][]byte
	for _, b := range ts.live {
		held = append(held, b)
	}
	ts.mu.Unlock()
	if len(held) != 2 {
		t.Fatalf("%d sockets tracked, want 2", len(held))
	}
	for _, b := range held {
		if len(b) != 4096 || bytes.IndexByte(b, 0) >= 0 {
			t.Errorf("ballast of %d bytes, a zero byte at %d: want 4096, every one written", len(b), bytes.IndexByte(b, 0))
		}
	}
	// Without one, nothing is held.
	if b := newBallast(0); b != nil {
		t.Errorf("no ballast: %d bytes", len(b))
	}
	if _, err := New(Config{ConnBallast: -1}); err == nil {
		t.Error("a negative ballast was accepted")
	}
}

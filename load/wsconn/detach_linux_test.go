package wsconn

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A detached Conn keeps no buffer: the event loop that took its socket
// reads and writes it, so thousands of detached connections cost the
// generator the Conn struct each. The frames the server sent behind the
// 101 still come back from Detach.
func TestDetachKeepsNoBuffers(t *testing.T) {
	after := serverFrame(true, OpText, []byte("hello"))
	url := rawServer(t, after)
	c := dial(t, url, Options{})
	// Let the frame arrive behind the 101 if it came in a second segment.
	deadline := time.Now().Add(5 * time.Second)
	for c.w-c.r < len(after) && time.Now().Before(deadline) {
		n, _ := c.nc.Read(c.rbuf[c.w:])
		c.w += n
	}
	fd, buffered, err := c.Detach()
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if !bytes.Equal(buffered, after) {
		t.Errorf("Detach returned %q, want the frame sent behind the 101 %q", buffered, after)
	}
	if c.rbuf != nil || c.wbuf != nil || c.frag != nil || c.ctrl != nil || c.lowatCtl != nil {
		t.Errorf("detached Conn still holds buffers: rbuf %d, wbuf %d, frag %d, ctrl %d bytes of capacity",
			cap(c.rbuf), cap(c.wbuf), cap(c.frag), cap(c.ctrl))
	}
	if _, _, err := c.ReadMessage(); err == nil {
		t.Error("ReadMessage on a detached Conn succeeded")
	}
	// AppendFrame still works: the loop frames with the Conn's PRNG.
	if f := c.AppendFrame(nil, OpText, []byte("x")); len(f) != 2+4+1 {
		t.Errorf("AppendFrame after Detach: %d bytes, want 7", len(f))
	}
}

// Dial followed by Detach never allocates the full read buffer (256 KiB
// by default) or the write buffer: what a connection handed to an event
// loop costs the heap is its handshake, a few KiB.
func TestDialDetachAllocatesNoLargeBuffers(t *testing.T) {
	url := rawServer(t, nil)
	const n = 20
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		c, err := Dial(ctx, url, Options{})
		if err != nil {
			t.Fatal(err)
		}
		fd, _, err := c.Detach()
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	if per > 64<<10 {
		t.Errorf("Dial + Detach allocated %d bytes per connection, want < 64 KiB (no %d-byte read buffer, no %d-byte write buffer)",
			per, DefaultReadBufferSize, DefaultWriteBufferSize)
	}
	t.Logf("Dial + Detach: %d bytes allocated per connection", per)
}

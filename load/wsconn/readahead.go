//go:build unix

package wsconn

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// ExpectBytes declares that the caller has nothing to do until n more bytes
// of frames (counted from the start of the unread data, so bytes already
// buffered count) have arrived: for example, a closed-loop echo that wrote
// a batch of B messages of S bytes expects B*(S+2) bytes (S <= 125; +4 up
// to 64 KiB) back. Until they have come, ReadMessage's reads set the
// socket's SO_RCVLOWAT to the bytes still missing (capped by the free read
// buffer), so the kernel wakes the reader once for the batch instead of
// once per segment the server wrote: fewer read syscalls and scheduler
// wake-ups per message. ExpectBytes(0) goes back to waking on every byte.
//
// Messages are still returned one by one, but a message that arrived early
// is returned only when the whole expected run is there, so do not use it
// where each message's own arrival time matters. An overestimate makes
// ReadMessage wait until the missing bytes come, a read deadline passes or
// the connection closes; never expect bytes the peer may not send. Without
// a TCP connection (or where the option fails) it does nothing; LowWaterErr
// says why. Reader goroutine only.
func (c *Conn) ExpectBytes(n int) {
	c.expect = n - (c.w - c.r)
	if c.rawConn == nil && c.lowatErr == nil {
		c.initLowWater()
	}
}

// LowWaterErr is the error that disabled ExpectBytes, if any.
func (c *Conn) LowWaterErr() error { return c.lowatErr }

func (c *Conn) initLowWater() {
	tc, ok := c.nc.(*net.TCPConn)
	if !ok {
		c.lowatErr = fmt.Errorf("websocket: ExpectBytes needs a TCP connection, have %T", c.nc)
		return
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		c.lowatErr = err
		return
	}
	c.lowat = 1 // the kernel's default
	c.lowatCtl = func(fd uintptr) {
		c.lowatErr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVLOWAT, c.lowat)
	}
	c.rawConn = rc
}

// setLowWater sets SO_RCVLOWAT to the expected bytes still missing, when
// that changed; called by fill before each read.
func (c *Conn) setLowWater() {
	want := min(max(c.expect, 1), len(c.rbuf)-c.w)
	want = max(want, 1)
	if want == c.lowat {
		return
	}
	c.lowat = want
	if err := c.rawConn.Control(c.lowatCtl); err != nil && c.lowatErr == nil {
		c.lowatErr = err
	}
	if c.lowatErr != nil {
		c.rawConn, c.expect = nil, 0 // give up: plain reads
	}
}

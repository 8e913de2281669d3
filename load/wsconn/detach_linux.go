package wsconn

import (
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// Detach hands the connection's socket to a caller that drives it with its
// own epoll (the load generator's reactor), taking it out of Go's
// netpoller: it returns a duplicate of the socket's descriptor, set
// non-blocking, and the bytes already read past the handshake (frames the
// server sent right behind the 101), which the caller must parse first.
// The Conn's own descriptor is closed without a close frame (the socket
// stays open through the duplicate) and the Conn must then be used only
// for AppendFrame, whose mask PRNG it keeps. The caller owns fd and closes
// it. Linux only.
func (c *Conn) Detach() (fd int, buffered []byte, err error) {
	tc, ok := c.nc.(*net.TCPConn)
	if !ok {
		return -1, nil, fmt.Errorf("websocket: detach needs a TCP connection, have %T", c.nc)
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return -1, nil, fmt.Errorf("websocket: detach: %w", err)
	}
	fd = -1
	var dupErr error
	if err := rc.Control(func(s uintptr) {
		fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return -1, nil, fmt.Errorf("websocket: detach: %w", err)
	}
	if dupErr != nil {
		return -1, nil, fmt.Errorf("websocket: detach: dup: %w", dupErr)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("websocket: detach: set non-blocking: %w", err)
	}
	// Closing Go's descriptor removes it from the netpoller; the socket
	// lives on through fd. Reads and writes through the Conn now fail.
	if err := tc.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("websocket: detach: %w", err)
	}
	buffered = append([]byte(nil), c.rbuf[c.r:c.w]...)
	c.readErr = fmt.Errorf("websocket: read: detached: %w", net.ErrClosed)
	c.wmu.Lock()
	c.closeSent = true // never write a close through the closed descriptor
	c.wmu.Unlock()
	c.release()
	return fd, buffered, nil
}

// release drops every buffer a detached Conn no longer uses: the caller
// reads and writes the socket from now on, and the Conn is kept only for
// AppendFrame (its mask PRNG). Thousands of detached connections then cost
// the generator the Conn struct each, not their buffers.
func (c *Conn) release() {
	c.rbuf, c.rsize, c.r, c.w = nil, 0, 0, 0
	c.frag, c.fragOp = nil, 0
	c.wbuf, c.wsize = nil, 0
	c.ctrl = nil
	c.rawConn, c.lowatCtl = nil, nil
}

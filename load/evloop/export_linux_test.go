package evloop

import "golang.org/x/sys/unix"

// setSndBuf shrinks a connection's socket send buffer.
func setSndBuf(c *Conn, n int) error {
	return unix.SetsockoptInt(int(c.fd), unix.SOL_SOCKET, unix.SO_SNDBUF, n)
}

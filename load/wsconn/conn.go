package wsconn

import (
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Opcode is a WebSocket frame opcode (RFC 6455 5.2).
type Opcode byte

// The opcodes of RFC 6455.
const (
	OpContinuation Opcode = 0x0
	OpText         Opcode = 0x1
	OpBinary       Opcode = 0x2
	OpClose        Opcode = 0x8
	OpPing         Opcode = 0x9
	OpPong         Opcode = 0xA
)

func (op Opcode) String() string {
	switch op {
	case OpContinuation:
		return "continuation"
	case OpText:
		return "text"
	case OpBinary:
		return "binary"
	case OpClose:
		return "close"
	case OpPing:
		return "ping"
	case OpPong:
		return "pong"
	}
	return "opcode(" + itoa(int(op)) + ")"
}

func (op Opcode) isControl() bool { return op&0x8 != 0 }

// Defaults for Options fields left zero.
const (
	DefaultReadBufferSize   = 256 << 10
	DefaultWriteBufferSize  = 64 << 10
	DefaultMaxMessageSize   = 64 << 20
	DefaultHandshakeTimeout = 10 * time.Second
)

// Options tunes a Conn. The zero value is ready to use.
type Options struct {
	// ReadBufferSize is the largest the buffer frames are parsed from
	// grows to, so the most one read syscall asks for: it starts at 4 KiB
	// and grows fourfold whenever a read fills it or a frame does not fit.
	// Also the limit on the size of the handshake response headers.
	// Minimum 4 KiB.
	ReadBufferSize int
	// WriteBufferSize is the initial capacity of the per-Conn buffer used
	// by WriteBatch and WriteMessage; it grows as needed.
	WriteBufferSize int
	// MaxMessageSize bounds a received message (all its fragments); a
	// larger one is an error and the Conn answers with close 1009.
	MaxMessageSize int
	// HandshakeTimeout bounds dial + handshake when ctx has no deadline.
	HandshakeTimeout time.Duration
	// Header is added to the upgrade request (e.g. Origin).
	Header http.Header
	// Dialer dials the TCP connection; nil means Source's next dialer, or
	// the SourceAddrs of Dial's context (WithSourceAddrs), or a zero
	// net.Dialer.
	Dialer *net.Dialer
	// Source spreads dials over several local addresses (SourceAddrs).
	Source *SourceAddrs
}

// handshakeBuffer is the read buffer a Conn starts with: the upgrade
// response is read into it (it doubles, up to ReadBufferSize, for larger
// headers), and ReadMessage grows it towards ReadBufferSize as the
// traffic needs (see Conn.rbuf).
const handshakeBuffer = 4 << 10

func (o Options) withDefaults() Options {
	if o.ReadBufferSize <= 0 {
		o.ReadBufferSize = DefaultReadBufferSize
	}
	if o.ReadBufferSize < 4<<10 {
		o.ReadBufferSize = 4 << 10
	}
	if o.WriteBufferSize <= 0 {
		o.WriteBufferSize = DefaultWriteBufferSize
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = DefaultMaxMessageSize
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	return o
}

// Conn is a client WebSocket connection. See the package comment for which
// methods may run concurrently.
type Conn struct {
	nc net.Conn  // nil in parser tests
	rd io.Reader // nc, or the test's reader
	wr io.Writer // nc, or the test's writer

	// Reader side (reader goroutine only). rbuf starts at handshakeBuffer
	// bytes, enough for the upgrade response and for small messages, and
	// grows (x4, up to rsize) only when a read fills it or a frame does
	// not fit: a connection that sees small messages at a low rate, or is
	// handed to an event loop (Detach), never holds the large buffer.
	rbuf    []byte
	rsize   int
	r, w    int    // unread bytes are rbuf[r:w]
	frag    []byte // reassembly buffer for fragmented or oversized messages
	fragOp  Opcode // opcode of the message being reassembled; 0 = none
	maxMsg  int
	readErr error // sticky

	// Writer side (writer goroutine only). wbuf is allocated (wsize
	// bytes of capacity) by the first WriteBatch or WriteMessage.
	wbuf  []byte
	wsize int
	wrng  uint64

	// Socket writes and control replies, under wmu.
	wmu       sync.Mutex
	ctrl      []byte // framed control replies
	crng      uint64
	closeSent bool

	reads    atomic.Int64
	messages atomic.Int64

	// Read-ahead (ExpectBytes): bytes still to come from the socket, and
	// the SO_RCVLOWAT in force. lowatCtl is built once so setting the
	// option does not allocate.
	expect   int
	lowat    int
	lowatErr error
	rawConn  syscall.RawConn
	lowatCtl func(fd uintptr)
}

func newConn(nc net.Conn, rd io.Reader, wr io.Writer, opts Options) *Conn {
	opts = opts.withDefaults()
	c := &Conn{
		nc:     nc,
		rd:     rd,
		wr:     wr,
		rbuf:   make([]byte, min(handshakeBuffer, opts.ReadBufferSize)),
		rsize:  opts.ReadBufferSize,
		maxMsg: opts.MaxMessageSize,
		wsize:  opts.WriteBufferSize,
		ctrl:   make([]byte, 0, maxControlFrame),
	}
	c.wrng, c.crng = seed(), seed()
	return c
}

// Reads is the number of read syscalls made on the connection since the
// handshake completed.
func (c *Conn) Reads() int64 { return c.reads.Load() }

// Messages is the number of data messages ReadMessage has returned.
func (c *Conn) Messages() int64 { return c.messages.Load() }

// NetConn is the underlying connection, e.g. for deadlines or addresses.
// Reading or writing it directly breaks the framing.
func (c *Conn) NetConn() net.Conn { return c.nc }

// SetReadDeadline sets the deadline of ReadMessage's read syscalls.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.nc.SetReadDeadline(t) }

// SetWriteDeadline sets the deadline of the write syscalls.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.nc.SetWriteDeadline(t) }

// Close sends close 1000 and closes the connection; see CloseWithCode.
func (c *Conn) Close() error { return c.CloseWithCode(CloseNormalClosure, "") }

// CloseWithCode sends a close frame with code and text (text is cut to fit
// a control frame) unless one was already sent, then closes the TCP
// connection without waiting for the server's close. The close frame is
// best effort: a write deadline one second out bounds it, and that deadline
// also releases a writer blocked on a peer that stopped reading.
func (c *Conn) CloseWithCode(code int, text string) error {
	if c.nc != nil {
		_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	}
	_ = c.sendClose(code, text)
	if c.nc == nil {
		return nil
	}
	return c.nc.Close()
}

// sendClose writes one close frame, at most once per Conn.
func (c *Conn) sendClose(code int, text string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closeSent {
		return nil
	}
	c.closeSent = true
	var p [maxControlPayload]byte
	n := 0
	if code != CloseNoStatusReceived && code > 0 {
		p[0], p[1] = byte(code>>8), byte(code)
		n = 2 + copy(p[2:], text)
	}
	c.ctrl = appendFrame(c.ctrl[:0], OpClose, p[:n], &c.crng)
	_, err := c.wr.Write(c.ctrl)
	return err
}

// sendPong answers a ping; called by the reader under wmu.
func (c *Conn) sendPong(payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closeSent {
		return nil
	}
	c.ctrl = appendFrame(c.ctrl[:0], OpPong, payload, &c.crng)
	_, err := c.wr.Write(c.ctrl)
	return err
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// Abort closes the TCP connection at once, with no close frame: a client
// that vanished (a killed tab, a lost network), for --drop. A later Close
// sends nothing.
func (c *Conn) Abort() error {
	c.wmu.Lock()
	c.closeSent = true
	c.wmu.Unlock()
	if c.nc == nil {
		return nil
	}
	return c.nc.Close()
}

// Shrink releases the read and write buffers of an idle connection when
// no unread byte is buffered: a connection that waits (its handshake done,
// its subscription made) before it is read again or handed to an event
// loop (Detach) then costs a few hundred bytes instead of its buffers. The
// next ReadMessage or write allocates them again, small at first. Reader
// goroutine only, with no write in progress.
func (c *Conn) Shrink() {
	if c.r == c.w {
		c.rbuf, c.r, c.w = nil, 0, 0
	}
	c.wbuf = nil
	c.wmu.Lock()
	c.ctrl = nil
	c.wmu.Unlock()
}

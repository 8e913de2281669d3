package evloop

import (
	"errors"
	"fmt"
	"io"

	"github.com/ceiling-bench/ceiling/load/wsconn"
	"golang.org/x/sys/unix"
)

// Conn is one connection of a loop. Its methods are for its Handler,
// called from its loop's goroutine (or before Run).
type Conn struct {
	l    *loop
	h    Handler
	ws   *wsconn.Conn // detached: its mask PRNG only
	fd   int32
	idx  int32 // order of Add
	slot int32 // index in l.conns, the epoll event's data
	hidx int32 // place in l.heap, -1 when no timer is set
	at   int64 // the timer's due time

	// pend holds the bytes of a partial frame between reads (a pooled
	// buffer, nil when none). When that frame is larger than the shared
	// read buffer (big > 0, its whole size), reads go straight into pend.
	pend []byte
	big  int
	// frag reassembles a fragmented message of opcode fragOp (0 = none).
	frag   []byte
	fragOp wsconn.Opcode
	// wq holds what the socket did not take (wq[woff:]), nil when none.
	wq   []byte
	woff int

	want, lowat int32 // SO_RCVLOWAT asked for (SetLowWater) and in force
	out         bool  // EPOLLOUT watched
	reading     bool  // inside read: SO_RCVLOWAT is applied after it
	done        bool
}

// Index is the connection's order of Add, from 0.
func (c *Conn) Index() int { return int(c.idx) }

// Loop is the index of the connection's loop, 0..Loops-1.
func (c *Conn) Loop() int { return c.l.idx }

// AppendFrame appends one masked client frame (a fresh mask) to dst.
func (c *Conn) AppendFrame(dst []byte, op wsconn.Opcode, p []byte) []byte {
	return c.ws.AppendFrame(dst, op, p)
}

// Scratch is the loop's shared scratch buffer, empty, to frame into with
// AppendFrame and pass to SendFrames. It is valid until the handler
// returns.
func (c *Conn) Scratch() []byte { return c.l.scratch[:0] }

// Send frames p and writes it now; what the socket does not take is
// queued and written when it can (EPOLLOUT), before anything sent later.
func (c *Conn) Send(op wsconn.Opcode, p []byte) {
	if c.done {
		return
	}
	if c.wq != nil {
		c.wq = c.ws.AppendFrame(c.wq, op, p)
		return
	}
	l := c.l
	l.wbuf = c.ws.AppendFrame(l.wbuf[:0], op, p)
	c.write(l.wbuf)
}

// SendFrames writes pre-framed bytes (frames AppendFrame put in
// Scratch()), queuing what the socket does not take as Send does.
func (c *Conn) SendFrames(frames []byte) {
	if cap(frames) > cap(c.l.scratch) {
		c.l.scratch = frames[:0] // Scratch grew: keep the larger buffer
	}
	if c.done || len(frames) == 0 {
		return
	}
	if c.wq != nil {
		c.wq = append(c.wq, frames...)
		return
	}
	c.write(frames)
}

// Pending is the number of bytes queued that the socket has not taken.
func (c *Conn) Pending() int { return len(c.wq) - c.woff }

// SetTimer sets the connection's one timer to fire at at (Config.Now's
// clock), replacing any set before; at <= 0 cancels it.
func (c *Conn) SetTimer(at int64) {
	if c.done {
		return
	}
	if at <= 0 {
		c.l.heap.remove(c)
		c.at = 0
		return
	}
	c.at = at
	c.l.heap.set(c)
}

// SetLowWater asks epoll to report the connection readable only once n
// bytes past its last complete message are in (SO_RCVLOWAT; n <= 1 is
// the kernel's default of any byte). The engine subtracts the bytes of a
// partial frame it already holds, and caps n at what one read can take.
// echo's closed loop sets the bytes of a batch's replies, so a batch costs
// one wake-up and one read.
func (c *Conn) SetLowWater(n int) {
	c.want = int32(max(n, 1))
	if !c.reading && !c.done {
		c.l.applyLowWater(c)
	}
}

// Close sends a close frame (1000) and ends the connection: its Closed
// runs, with a nil error, before Close returns.
func (c *Conn) Close() {
	if c.done {
		return
	}
	c.sendClose(wsconn.CloseNormalClosure)
	c.l.end(c, nil)
}

// write writes b now and queues what the socket does not take.
func (c *Conn) write(b []byte) {
	for len(b) > 0 {
		n, err := rawWrite(int(c.fd), b)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			break
		}
		if err != nil {
			c.l.end(c, fmt.Errorf("websocket: write: %w", err))
			return
		}
		b = b[n:]
	}
	if len(b) > 0 {
		c.wq = append(c.l.free.get(len(b)), b...)
		c.woff = 0
		c.l.watch(c, true)
	}
}

// flush writes the queue (EPOLLOUT came); once empty the buffer goes back
// to the loop and EPOLLOUT is no longer watched.
func (l *loop) flush(c *Conn) {
	for c.woff < len(c.wq) {
		n, err := rawWrite(int(c.fd), c.wq[c.woff:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return
		}
		if err != nil {
			l.end(c, fmt.Errorf("websocket: write: %w", err))
			return
		}
		c.woff += n
	}
	if c.wq != nil {
		l.free.put(c.wq)
		c.wq, c.woff = nil, 0
	}
	l.watch(c, false)
}

// watch adds or removes EPOLLOUT.
func (l *loop) watch(c *Conn, out bool) {
	if c.out == out || c.done {
		return
	}
	events := uint32(unix.EPOLLIN | unix.EPOLLRDHUP)
	if out {
		events |= unix.EPOLLOUT
	}
	ev := unix.EpollEvent{Events: events, Fd: c.slot}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, int(c.fd), &ev); err != nil {
		l.end(c, fmt.Errorf("evloop: epoll_ctl mod: %w", err))
		return
	}
	c.out = out
}

// sendClose writes a close frame with code, best effort and never
// blocking: behind queued bytes it goes to the queue's end and is written
// only if the socket takes everything now.
func (c *Conn) sendClose(code int) {
	if c.done {
		return
	}
	p := [2]byte{byte(code >> 8), byte(code)}
	if c.wq != nil {
		c.wq = c.ws.AppendFrame(c.wq, wsconn.OpClose, p[:])
		for c.woff < len(c.wq) {
			n, err := rawWrite(int(c.fd), c.wq[c.woff:])
			if err != nil {
				return
			}
			c.woff += n
		}
		return
	}
	l := c.l
	l.wbuf = c.ws.AppendFrame(l.wbuf[:0], wsconn.OpClose, p[:])
	_, _ = rawWrite(int(c.fd), l.wbuf)
}

// end ends a connection once: out of epoll and the timer heap, its
// descriptor closed, its buffers back to the loop, then Closed.
func (l *loop) end(c *Conn, err error) {
	if c.done {
		return
	}
	c.done = true
	l.active--
	l.heap.remove(c)
	c.at = 0
	_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, int(c.fd), nil)
	closeFd(int(c.fd))
	for _, b := range [...][]byte{c.pend, c.frag, c.wq} {
		if b != nil {
			l.free.put(b)
		}
	}
	c.pend, c.frag, c.wq, c.big, c.woff = nil, nil, nil, 0, 0
	c.h.Closed(c, err)
}

// applyLowWater sets SO_RCVLOWAT to the bytes asked for less those held,
// at least 1 and at most what the next read can take, when that changed.
func (l *loop) applyLowWater(c *Conn) {
	room := len(l.rbuf) - len(c.pend)
	if c.big > 0 {
		room = c.big - len(c.pend)
	}
	want := int32(max(1, min(int(c.want)-len(c.pend), room)))
	if c.want <= 1 {
		want = 1
	}
	if want == c.lowat || (c.lowat == 0 && want == 1) {
		return
	}
	if err := unix.SetsockoptInt(int(c.fd), unix.SOL_SOCKET, unix.SO_RCVLOWAT, int(want)); err != nil {
		l.end(c, fmt.Errorf("evloop: SO_RCVLOWAT: %w", err))
		return
	}
	c.lowat = want
}

// read makes one read syscall (epoll is level-triggered: anything left
// brings the loop back) and handles what came, timed when the read
// returned: a read can take bytes that arrived after epoll_wait did, so
// an earlier time could precede a message's own timestamp.
func (l *loop) read(c *Conn) {
	c.reading = true
	defer l.doneReading(c)
	if c.big > 0 { // a frame larger than the shared buffer: read into its own
		n, ok := l.readInto(c, c.pend[len(c.pend):c.big])
		if !ok {
			return
		}
		c.pend = c.pend[:len(c.pend)+n]
		if len(c.pend) < c.big {
			return
		}
		b := c.pend
		c.pend, c.big = nil, 0
		l.parse(c, b, l.now())
		l.free.put(b)
		return
	}
	k := 0
	if c.pend != nil {
		k = copy(l.rbuf, c.pend)
		l.free.put(c.pend)
		c.pend = nil
	}
	n, ok := l.readInto(c, l.rbuf[k:])
	if !ok {
		if k > 0 && !c.done { // EAGAIN: keep the partial frame
			c.pend = append(l.free.get(k), l.rbuf[:k]...)
		}
		return
	}
	l.parse(c, l.rbuf[:k+n], l.now())
}

func (l *loop) doneReading(c *Conn) {
	c.reading = false
	if !c.done && c.want > 0 {
		l.applyLowWater(c)
	}
}

// readInto reads into p; false when there was nothing to read or the
// connection ended (then Closed ran).
func (l *loop) readInto(c *Conn, p []byte) (int, bool) {
	n, err := rawRead(int(c.fd), p)
	l.reads.Add(1)
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return 0, false
	case err != nil:
		l.end(c, fmt.Errorf("websocket: read: %w", err))
		return 0, false
	case n == 0:
		err := io.EOF
		if len(c.pend) > 0 || c.fragOp != 0 {
			err = io.ErrUnexpectedEOF
		}
		l.end(c, fmt.Errorf("websocket: read: %w", err))
		return 0, false
	}
	return n, true
}

// parseBuffered handles the bytes that came with the handshake.
func (l *loop) parseBuffered(c *Conn) {
	b := c.pend
	c.pend = nil
	l.parse(c, b, l.now())
	l.free.put(b)
}

// parse handles every whole frame in b and keeps a partial one at its end
// in c.pend.
func (l *loop) parse(c *Conn, b []byte, now int64) {
	var msgs int64
	for len(b) > 0 && !c.done {
		// The frame nearly every read holds (a whole final text or
		// binary frame outside a fragmented message) goes straight to
		// the handler; anything else takes the checks below.
		if c.fragOp == 0 {
			if op, p, n, ok := wsconn.DataFrame(b); ok {
				c.h.Message(c, op, p, now)
				msgs++
				b = b[n:]
				continue
			}
		}
		h, need, err := wsconn.ParseHeader(b)
		if err != nil {
			l.protocolError(c, err, wsconn.CloseProtocolError)
			break
		}
		if need > 0 {
			break
		}
		if err := l.check(c, h); err != nil {
			code := wsconn.CloseProtocolError
			if h.PayloadLen > maxMessageSize {
				code = wsconn.CloseMessageTooBig
			}
			l.protocolError(c, err, code)
			break
		}
		total := h.HeaderLen + int(h.PayloadLen)
		if len(b) < total {
			if total > len(l.rbuf) {
				c.big = total
				c.pend = append(l.free.get(total), b...)
				b = b[len(b):]
			}
			break
		}
		if l.frame(c, h, b[h.HeaderLen:total], now) {
			msgs++
		}
		b = b[total:]
	}
	if len(b) > 0 && !c.done {
		c.pend = append(l.free.get(len(b)), b...)
	}
	if msgs > 0 {
		l.messages.Add(msgs)
	}
}

// frame handles one whole frame; true when it completed a data message.
func (l *loop) frame(c *Conn, h wsconn.FrameHeader, p []byte, now int64) bool {
	switch h.Op {
	case wsconn.OpPing:
		c.Send(wsconn.OpPong, p)
	case wsconn.OpPong:
	case wsconn.OpClose:
		err := wsconn.CloseFrameError(p)
		var ce *wsconn.CloseError
		if errors.As(err, &ce) {
			code := ce.Code
			if code == wsconn.CloseNoStatusReceived {
				code = wsconn.CloseNormalClosure
			}
			c.sendClose(code)
		} else {
			c.sendClose(wsconn.CloseProtocolError)
		}
		l.end(c, err)
	case wsconn.OpText, wsconn.OpBinary:
		if !h.Fin {
			c.fragOp = h.Op
			c.frag = append(l.free.get(len(p)*2), p...)
			return false
		}
		c.h.Message(c, h.Op, p, now)
		return true
	case wsconn.OpContinuation:
		c.frag = append(c.frag, p...)
		if !h.Fin {
			return false
		}
		msg, op := c.frag, c.fragOp
		c.frag, c.fragOp = nil, 0
		c.h.Message(c, op, msg, now)
		l.free.put(msg)
		return true
	}
	return false
}

// check applies the per-frame rules ParseHeader leaves to its caller.
func (l *loop) check(c *Conn, h wsconn.FrameHeader) error {
	switch h.Op {
	case wsconn.OpPing, wsconn.OpPong, wsconn.OpClose:
		if !h.Fin || h.PayloadLen > 125 {
			return &wsconn.ProtocolError{Reason: "control frame fragmented or longer than 125 bytes"}
		}
		return nil
	case wsconn.OpText, wsconn.OpBinary:
		if c.fragOp != 0 {
			return &wsconn.ProtocolError{Reason: "data frame inside a fragmented message"}
		}
	case wsconn.OpContinuation:
		if c.fragOp == 0 {
			return &wsconn.ProtocolError{Reason: "continuation frame with no message to continue"}
		}
	default:
		return &wsconn.ProtocolError{Reason: "reserved " + h.Op.String()}
	}
	if h.PayloadLen+uint64(len(c.frag)) > maxMessageSize {
		return &wsconn.ProtocolError{Reason: fmt.Sprintf("message larger than %d bytes", maxMessageSize)}
	}
	return nil
}

func (l *loop) protocolError(c *Conn, err error, code int) {
	c.sendClose(code)
	l.end(c, err)
}

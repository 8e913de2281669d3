package reactor

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ceiling-bench/ceiling/load/wsconn"
	"golang.org/x/sys/unix"
)

// errNoReplyByDrain wraps os.ErrDeadlineExceeded, so it counts as the
// goroutine loop's read deadline does.
var errNoReplyByDrain = fmt.Errorf("reactor: no reply by the drain deadline: %w", os.ErrDeadlineExceeded)

// conn is one connection's state; only the reactor's goroutine touches it.
type conn struct {
	ws    *wsconn.Conn // detached: its mask PRNG only
	fd    int
	idx   int32 // index in Reactor.conns, the epoll event's data
	rbuf  []byte
	r, w  int // unread bytes are rbuf[r:w]
	wbuf  []byte
	woff  int // unwritten bytes are wbuf[woff:]
	out   bool
	lowat int // SO_RCVLOWAT in force (WakePerBatch)

	t0       int64 // send time of the batch in flight
	measured bool
	pending  int // replies of that batch still to come
	next     int // pool position of the next value

	done, failed bool
}

func newConn(ws *wsconn.Conn, fd int, idx int32, cfg Config, next int) *conn {
	return &conn{
		ws:    ws,
		fd:    fd,
		idx:   idx,
		rbuf:  make([]byte, readBufferSize(cfg.RecordSize)),
		wbuf:  make([]byte, 0, cfg.Batch*(cfg.RecordSize+14)+256),
		next:  next,
		lowat: 1, // the kernel's default
	}
}

// send frames the connection's next batch and writes it, unless the
// window has ended; then the connection is finished.
func (r *Reactor) send(c *conn) {
	if c.woff == len(c.wbuf) {
		c.wbuf, c.woff = c.wbuf[:0], 0
	}
	mark := len(c.wbuf)
	pool := r.cfg.Pool
	for range r.cfg.Batch {
		c.wbuf = c.ws.AppendFrame(c.wbuf, r.cfg.Op, pool.Value(c.next))
		if c.next++; c.next == pool.Len() {
			c.next = 0
		}
	}
	t0 := r.cfg.Now()
	if t0 >= r.cfg.Window.End {
		c.wbuf = c.wbuf[:mark]
		r.finish(c)
		return
	}
	c.t0, c.measured, c.pending = t0, r.cfg.Window.In(t0), r.cfg.Batch
	r.flush(c)
	if r.cfg.WakePerBatch && !c.done {
		r.lowWater(c)
	}
}

// flush writes what is queued; what the socket does not take waits for
// EPOLLOUT.
func (r *Reactor) flush(c *conn) {
	for c.woff < len(c.wbuf) {
		n, err := rawWrite(c.fd, c.wbuf[c.woff:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			if !c.out {
				r.watch(c, unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLOUT)
				c.out = true
			}
			return
		}
		if err != nil {
			r.fail(c, fmt.Errorf("websocket: write: %w", err))
			return
		}
		c.woff += n
	}
	c.wbuf, c.woff = c.wbuf[:0], 0
	if c.out {
		r.watch(c, unix.EPOLLIN|unix.EPOLLRDHUP)
		c.out = false
	}
}

func (r *Reactor) watch(c *conn, events uint32) {
	ev := unix.EpollEvent{Events: events, Fd: c.idx}
	if err := unix.EpollCtl(r.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
		r.fail(c, fmt.Errorf("reactor: epoll_ctl mod: %w", err))
	}
}

// read makes one read syscall (epoll is level-triggered: anything left
// brings us back) and parses what came; now is the read's time.
func (r *Reactor) read(c *conn, now int64) {
	if c.w == len(c.rbuf) { // a partial frame at the end: move it to the front
		c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
		c.r = 0
	}
	n, err := rawRead(c.fd, c.rbuf[c.w:])
	r.reads.Add(1)
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return
	case err != nil:
		r.fail(c, fmt.Errorf("websocket: read: %w", err))
		return
	case n == 0:
		err := io.EOF
		if c.w > c.r {
			err = io.ErrUnexpectedEOF
		}
		r.fail(c, fmt.Errorf("websocket: read: %w", err))
		return
	}
	c.w += n
	r.parse(c, now)
	if r.cfg.WakePerBatch && !c.done {
		r.lowWater(c)
	}
}

// lowWater sets SO_RCVLOWAT to the reply bytes still missing (at least
// 1, at most the free read buffer), when that changed: in the steady
// state a batch's replies come whole and the value never changes.
func (r *Reactor) lowWater(c *conn) {
	want := c.pending*r.frameSize - (c.w - c.r)
	want = max(1, min(want, len(c.rbuf)-c.w))
	if want == c.lowat {
		return
	}
	if err := unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_RCVLOWAT, want); err != nil {
		r.fail(c, fmt.Errorf("reactor: SO_RCVLOWAT: %w", err))
		return
	}
	c.lowat = want
}

// parse handles every whole frame buffered.
func (r *Reactor) parse(c *conn, now int64) {
	var msgs int64
	defer func() { r.messages.Add(msgs) }()
	for !c.done {
		h, need, err := wsconn.ParseHeader(c.rbuf[c.r:c.w])
		if err != nil {
			r.protocolError(c, err)
			return
		}
		if need > 0 {
			break
		}
		if err := r.check(c, h); err != nil {
			r.protocolError(c, err)
			return
		}
		total := h.HeaderLen + int(h.PayloadLen)
		if c.w-c.r < total {
			break
		}
		p := c.rbuf[c.r+h.HeaderLen : c.r+total]
		c.r += total
		switch h.Op {
		case wsconn.OpPing:
			c.wbuf = c.ws.AppendFrame(c.wbuf, wsconn.OpPong, p)
			r.flush(c)
		case wsconn.OpPong:
		case wsconn.OpClose:
			err := wsconn.CloseFrameError(p)
			var ce *wsconn.CloseError
			if errors.As(err, &ce) {
				code := ce.Code
				if code == wsconn.CloseNoStatusReceived {
					code = wsconn.CloseNormalClosure
				}
				r.sendClose(c, code)
			}
			r.fail(c, err)
			return
		default: // text or binary, checked
			msgs++
			r.reply(c, now, len(p))
		}
	}
	if c.r == c.w {
		c.r, c.w = 0, 0
	}
}

// reply accounts one data message against the batch in flight and sends
// the next batch when it was the last.
func (r *Reactor) reply(c *conn, now int64, size int) {
	if c.pending == 0 {
		r.rec.Error("echo_unexpected_reply")
		return
	}
	c.pending--
	switch {
	case size != r.cfg.RecordSize:
		r.rec.Error("echo_size_mismatch")
	case c.measured:
		r.rec.Reply(now-c.t0, size)
	}
	if c.pending == 0 {
		if c.measured {
			r.rec.Batch()
		}
		r.send(c)
	}
}

// check applies the per-frame rules ParseHeader leaves to its caller.
func (r *Reactor) check(c *conn, h wsconn.FrameHeader) error {
	switch h.Op {
	case wsconn.OpPing, wsconn.OpPong, wsconn.OpClose:
		if !h.Fin || h.PayloadLen > 125 {
			return &wsconn.ProtocolError{Reason: "control frame fragmented or longer than 125 bytes"}
		}
	case wsconn.OpText, wsconn.OpBinary:
		if !h.Fin {
			return &wsconn.ProtocolError{Reason: "fragmented message (the reactor reads unfragmented messages only)"}
		}
	case wsconn.OpContinuation:
		return &wsconn.ProtocolError{Reason: "continuation frame (the reactor reads unfragmented messages only)"}
	default:
		return &wsconn.ProtocolError{Reason: "reserved " + h.Op.String()}
	}
	if h.PayloadLen > uint64(len(c.rbuf)-h.HeaderLen) {
		return &wsconn.ProtocolError{Reason: fmt.Sprintf("frame of %d bytes larger than the %d-byte read buffer", h.PayloadLen, len(c.rbuf))}
	}
	return nil
}

func (r *Reactor) protocolError(c *conn, err error) {
	r.sendClose(c, wsconn.CloseProtocolError)
	r.fail(c, err)
}

// sendClose queues a close frame behind anything unwritten and writes
// what the socket takes now (best effort: the connection ends here).
func (r *Reactor) sendClose(c *conn, code int) {
	c.wbuf = c.ws.AppendFrame(c.wbuf, wsconn.OpClose, []byte{byte(code >> 8), byte(code)})
	for c.woff < len(c.wbuf) {
		n, err := rawWrite(c.fd, c.wbuf[c.woff:])
		if err != nil {
			break
		}
		c.woff += n
	}
	c.failed = true // no second close in Close
}

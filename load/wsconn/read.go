package wsconn

import (
	"errors"
	"fmt"
	"io"
)

// ReadMessage returns the next data message. The payload aliases a per-Conn
// buffer and is valid until the next ReadMessage call. Control frames are
// handled here (see the package comment). Text payloads are not checked for
// valid UTF-8. Reader goroutine only.
func (c *Conn) ReadMessage() (Opcode, []byte, error) {
	if c.readErr != nil {
		return 0, nil, c.readErr
	}
	if len(c.rbuf) == 0 { // released while idle: start small again
		c.rbuf, c.r, c.w = make([]byte, min(handshakeBuffer, c.rsize)), 0, 0
	}
	for {
		h, need, err := ParseHeader(c.rbuf[c.r:c.w])
		if err != nil {
			return c.fail(err)
		}
		if need > 0 {
			if err := c.fill(need); err != nil {
				return c.fail(err)
			}
			continue
		}
		fin, op, hlen, n := h.Fin, h.Op, h.HeaderLen, h.PayloadLen
		if err := c.check(fin, op, n); err != nil {
			return c.fail(err)
		}
		total := hlen + int(n)
		if total > len(c.rbuf) && len(c.rbuf) < c.rsize && uint64(hlen)+n <= uint64(c.rsize) {
			c.growRead(min(c.rsize, max(4*len(c.rbuf), total)))
		}
		if total <= len(c.rbuf) {
			if c.w-c.r < total {
				if err := c.fill(total); err != nil {
					return c.fail(err)
				}
			}
			payload := c.rbuf[c.r+hlen : c.r+total]
			c.r += total
			switch {
			case op == OpPing:
				_ = c.sendPong(payload) // a broken socket shows up on the next read
				continue
			case op == OpPong:
				continue
			case op == OpClose:
				return c.fail(c.closeFrom(payload))
			case fin && op != OpContinuation:
				c.messages.Add(1)
				return op, payload, nil
			case op != OpContinuation:
				c.fragOp, c.frag = op, append(c.frag[:0], payload...)
			default:
				c.frag = append(c.frag, payload...)
			}
		} else {
			// A data frame larger than the read buffer: stream its payload
			// into the reassembly buffer (control frames are <= 125 bytes).
			c.r += hlen
			if op != OpContinuation {
				c.fragOp, c.frag = op, c.frag[:0]
			}
			if err := c.readPayload(int(n)); err != nil {
				return c.fail(err)
			}
		}
		if fin {
			op := c.fragOp
			c.fragOp = 0
			c.messages.Add(1)
			return op, c.frag, nil
		}
	}
}

// check validates a frame header against RFC 6455 and the size limit.
func (c *Conn) check(fin bool, op Opcode, n uint64) error {
	switch op {
	case OpPing, OpPong, OpClose:
		if !fin {
			return &ProtocolError{"fragmented " + op.String() + " frame"}
		}
		if n > maxControlPayload {
			return &ProtocolError{op.String() + " frame longer than 125 bytes"}
		}
		return nil
	case OpText, OpBinary:
		if c.fragOp != 0 {
			return &ProtocolError{"new " + op.String() + " message inside a fragmented message"}
		}
		if n > uint64(c.maxMsg) {
			return errTooBig(n, c.maxMsg)
		}
		return nil
	case OpContinuation:
		if c.fragOp == 0 {
			return &ProtocolError{"continuation frame without a message to continue"}
		}
		if n > uint64(c.maxMsg-len(c.frag)) {
			return errTooBig(uint64(len(c.frag))+n, c.maxMsg)
		}
		return nil
	}
	return &ProtocolError{"reserved " + op.String()}
}

type tooBigError struct{ ProtocolError }

func errTooBig(n uint64, limit int) error {
	return &tooBigError{ProtocolError{fmt.Sprintf("message of %d bytes exceeds MaxMessageSize %d", n, limit)}}
}

// growRead moves the unread bytes into a read buffer of n bytes.
func (c *Conn) growRead(n int) {
	b := make([]byte, n)
	c.w = copy(b, c.rbuf[c.r:c.w])
	c.r = 0
	c.rbuf = b
}

// fill reads until at least need (<= len(rbuf)) unread bytes are buffered.
func (c *Conn) fill(need int) error {
	if c.r == c.w {
		c.r, c.w = 0, 0
	} else if c.r+need > len(c.rbuf) {
		c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
		c.r = 0
	}
	for c.w-c.r < need {
		if c.rawConn != nil && (c.expect > 0 || c.lowat > 1) {
			c.setLowWater()
		}
		n, err := c.rd.Read(c.rbuf[c.w:])
		c.reads.Add(1)
		c.w += n
		c.expect -= n
		if c.w == len(c.rbuf) && len(c.rbuf) < c.rsize {
			// The read filled the buffer: more is waiting than it holds.
			c.growRead(min(c.rsize, 4*len(c.rbuf)))
		}
		if err != nil && c.w-c.r < need {
			if err == io.EOF && c.w > c.r {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// readPayload appends the next n payload bytes to frag: first what the read
// buffer holds, then straight from the socket.
func (c *Conn) readPayload(n int) error {
	k := min(n, c.w-c.r)
	c.frag = append(c.frag, c.rbuf[c.r:c.r+k]...)
	c.r += k
	n -= k
	if n == 0 {
		return nil
	}
	c.frag = grow(c.frag, n)
	end := len(c.frag) + n
	for len(c.frag) < end {
		m, err := c.rd.Read(c.frag[len(c.frag):end])
		c.reads.Add(1)
		c.frag = c.frag[:len(c.frag)+m]
		if err != nil && len(c.frag) < end {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), len(b)+n)
	copy(nb, b)
	return nb
}

// closeFrom turns a close frame into its error and echoes its code.
func (c *Conn) closeFrom(p []byte) error {
	err := CloseFrameError(p)
	if ce, ok := err.(*CloseError); ok {
		echo := ce.Code
		if echo == CloseNoStatusReceived {
			echo = CloseNormalClosure
		}
		_ = c.sendClose(echo, "")
	}
	return err
}

// fail makes err sticky and, for a protocol violation, tells the server.
func (c *Conn) fail(err error) (Opcode, []byte, error) {
	var tb *tooBigError
	var pe *ProtocolError
	switch {
	case errors.As(err, &tb):
		_ = c.sendClose(CloseMessageTooBig, "")
		err = &tb.ProtocolError
	case errors.As(err, &pe):
		_ = c.sendClose(CloseProtocolError, "")
	case errors.As(err, new(*CloseError)):
	default:
		err = fmt.Errorf("websocket: read: %w", err)
	}
	c.readErr = err
	return 0, nil, err
}

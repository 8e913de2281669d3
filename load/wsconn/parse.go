package wsconn

import "encoding/binary"

// FrameHeader is a server frame's header as ParseHeader read it.
type FrameHeader struct {
	Fin        bool
	Op         Opcode
	HeaderLen  int    // bytes of header before the payload (2, 4 or 10)
	PayloadLen uint64 // payload bytes that follow the header
}

// ParseHeader parses the server frame header at the start of b: the one
// frame parser, shared by ReadMessage and by callers that read the socket
// themselves (the load generator's event loops, load/evloop). need > 0 means b is too
// short and at least need bytes are required; nothing is consumed. A frame
// with RSV bits or a mask (servers never mask) is a *ProtocolError. The
// per-message rules (control frame size, fragmentation state, size limit)
// are the caller's.
func ParseHeader(b []byte) (h FrameHeader, need int, err error) {
	if len(b) < 2 {
		return h, 2, nil
	}
	b0, b1 := b[0], b[1]
	if b0&0x70 != 0 {
		return h, 0, &ProtocolError{"RSV bits set without a negotiated extension"}
	}
	if b1&0x80 != 0 {
		return h, 0, &ProtocolError{"masked frame from the server"}
	}
	h.Fin, h.Op = b0&0x80 != 0, Opcode(b0&0x0F)
	h.HeaderLen, h.PayloadLen = 2, uint64(b1&0x7F)
	switch h.PayloadLen {
	case 126:
		h.HeaderLen = 4
	case 127:
		h.HeaderLen = 10
	default:
		return h, 0, nil
	}
	if len(b) < h.HeaderLen {
		return h, h.HeaderLen, nil
	}
	if h.HeaderLen == 4 {
		h.PayloadLen = uint64(binary.BigEndian.Uint16(b[2:]))
	} else {
		h.PayloadLen = binary.BigEndian.Uint64(b[2:])
	}
	return h, 0, nil
}

// DataFrame is ParseHeader's fast path for the frame a load generator
// reads nearly always: when b starts with a whole final, unmasked text or
// binary frame of at most 65535 payload bytes (a 2- or 4-byte header), ok
// is true and DataFrame returns its opcode, its payload (aliasing b) and
// its size on the wire. Otherwise ok is false and the caller parses with
// ParseHeader, which accepts every frame DataFrame does, with the same
// result. Such a frame passes every per-message rule but one, which stays
// the caller's: it must not arrive inside a fragmented message.
func DataFrame(b []byte) (op Opcode, payload []byte, n int, ok bool) {
	if len(b) < 2 {
		return 0, nil, 0, false
	}
	b0, b1 := b[0], b[1]
	if (b0 != 0x80|byte(OpText) && b0 != 0x80|byte(OpBinary)) || b1 > 126 {
		return 0, nil, 0, false // not final data, RSV set, masked or a 64-bit length
	}
	hl, pl := 2, int(b1)
	if b1 == 126 {
		if len(b) < 4 {
			return 0, nil, 0, false
		}
		hl, pl = 4, int(binary.BigEndian.Uint16(b[2:]))
	}
	if n = hl + pl; len(b) < n {
		return 0, nil, 0, false
	}
	return Opcode(b0 & 0x0F), b[hl:n], n, true
}

// CloseFrameError turns a close frame's payload into the error ReadMessage
// returns for it: a *CloseError (Code CloseNoStatusReceived when the frame
// carried none) or, for a 1-byte payload, a *ProtocolError.
func CloseFrameError(p []byte) error {
	if len(p) == 1 {
		return &ProtocolError{"close frame with a 1-byte payload"}
	}
	ce := &CloseError{Code: CloseNoStatusReceived}
	if len(p) >= 2 {
		ce.Code = int(binary.BigEndian.Uint16(p))
		ce.Text = string(p[2:])
	}
	return ce
}

package refserver

import "encoding/binary"

// Server-to-client frames are unmasked, so a frame built once can be
// written unchanged to every subscriber. These helpers build whole frames
// (header + payload) for the Pusher sockets, whose writer goroutines send
// them with one writev per batch instead of going through gorilla's writer.

const (
	opText  = 0x1
	opClose = 0x8
	opPong  = 0xA
	finBit  = 0x80

	maxHeader = 10 // FIN/opcode byte, length byte, up to 8 extended length bytes
)

// frameBuf returns a buffer with room reserved for the header; append the
// payload to it and pass it to sealFrame.
func frameBuf(payloadHint int) []byte {
	return make([]byte, maxHeader, maxHeader+payloadHint)
}

// sealFrame writes the header for the payload that follows the reserved
// maxHeader bytes of b, right-aligned, and returns the frame.
func sealFrame(b []byte, opcode byte) []byte {
	n := len(b) - maxHeader
	var start int
	switch {
	case n < 126:
		start = maxHeader - 2
		b[start+1] = byte(n)
	case n <= 0xFFFF:
		start = maxHeader - 4
		b[start+1] = 126
		binary.BigEndian.PutUint16(b[start+2:], uint16(n))
	default:
		start = 0
		b[1] = 127
		binary.BigEndian.PutUint64(b[2:], uint64(n))
	}
	b[start] = finBit | opcode
	return b[start:]
}

// closeFrame builds a close frame with code and reason (reason trimmed so
// the payload stays within the 125-byte control-frame limit). Code 0 gives
// an empty close frame.
func closeFrame(code int, reason string) []byte {
	b := frameBuf(2 + len(reason))
	if code != 0 {
		if len(reason) > 123 {
			reason = reason[:123]
		}
		b = binary.BigEndian.AppendUint16(b, uint16(code))
		b = append(b, reason...)
	}
	return sealFrame(b, opClose)
}

// controlFrame builds a ping/pong frame carrying payload (at most 125 bytes).
func controlFrame(opcode byte, payload string) []byte {
	if len(payload) > 125 {
		payload = payload[:125]
	}
	return sealFrame(append(frameBuf(len(payload)), payload...), opcode)
}

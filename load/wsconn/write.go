package wsconn

import (
	"crypto/rand"
	"encoding/binary"
	"math/bits"
	"slices"
)

const (
	maxControlPayload = 125
	maxControlFrame   = 2 + 4 + maxControlPayload // client control frame: short header + mask
)

// AppendFrame appends one final, masked frame carrying payload to dst and
// returns the extended slice. It uses the writer's PRNG: call it from the
// writer goroutine only. It does not write to the socket (see Write).
func (c *Conn) AppendFrame(dst []byte, op Opcode, payload []byte) []byte {
	return appendFrame(dst, op, payload, &c.wrng)
}

// Write sends buf, typically frames built with AppendFrame, in one write
// call. Safe from any goroutine.
func (c *Conn) Write(buf []byte) error {
	c.wmu.Lock()
	_, err := c.wr.Write(buf)
	c.wmu.Unlock()
	return err
}

// WriteBatch frames every payload with op into the per-Conn write buffer
// and sends them in one Write. Writer goroutine only.
func (c *Conn) WriteBatch(op Opcode, payloads [][]byte) error {
	if c.wbuf == nil {
		c.wbuf = make([]byte, 0, c.wsize)
	}
	b := c.wbuf[:0]
	for _, p := range payloads {
		b = appendFrame(b, op, p, &c.wrng)
	}
	c.wbuf = b
	return c.Write(b)
}

// WriteMessage sends one frame from the per-Conn write buffer. Writer
// goroutine only.
func (c *Conn) WriteMessage(op Opcode, payload []byte) error {
	if c.wbuf == nil {
		c.wbuf = make([]byte, 0, c.wsize)
	}
	c.wbuf = appendFrame(c.wbuf[:0], op, payload, &c.wrng)
	return c.Write(c.wbuf)
}

func appendFrame(dst []byte, op Opcode, payload []byte, rng *uint64) []byte {
	n := len(payload)
	key := uint32(wyrand(rng))
	switch {
	case n <= 125:
		dst = append(dst, 0x80|byte(op), 0x80|byte(n))
	case n <= 0xFFFF:
		dst = append(dst, 0x80|byte(op), 0x80|126, byte(n>>8), byte(n))
	default:
		dst = append(dst, 0x80|byte(op), 0x80|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	dst = binary.LittleEndian.AppendUint32(dst, key)
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	maskCopy(dst[start:], payload, key)
	return dst
}

// maskCopy writes src XORed with the 4-byte mask key (stored little
// endian, so byte i of the key is key>>(8*i)) into dst, eight bytes at a
// time: one pass over the payload where a copy and then an in-place XOR
// took two (make bench: the copy was as costly as the masking). dst is at
// least as long as src, and src starts at key offset 0.
func maskCopy(dst, src []byte, key uint32) {
	k := uint64(key) | uint64(key)<<32
	dst = dst[:len(src)]
	for len(src) >= 32 {
		d, s := dst[:32], src[:32]
		binary.LittleEndian.PutUint64(d, binary.LittleEndian.Uint64(s)^k)
		binary.LittleEndian.PutUint64(d[8:], binary.LittleEndian.Uint64(s[8:])^k)
		binary.LittleEndian.PutUint64(d[16:], binary.LittleEndian.Uint64(s[16:])^k)
		binary.LittleEndian.PutUint64(d[24:], binary.LittleEndian.Uint64(s[24:])^k)
		dst, src = dst[32:], src[32:]
	}
	for len(src) >= 8 {
		binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(src)^k)
		dst, src = dst[8:], src[8:]
	}
	for i := range src {
		dst[i] = src[i] ^ byte(k>>(8*(i&3)))
	}
}

// wyrand is Wang Yi's wyrand: fast, passes BigCrush, and plenty for mask
// keys, whose only job (RFC 6455 10.3) is to be unpredictable to scripts in
// a browser — not a concern for a load generator, but we keep them fresh.
func wyrand(s *uint64) uint64 {
	*s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(*s, *s^0xe7037ed1a0b428db)
	return hi ^ lo
}

func seed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return binary.LittleEndian.Uint64(b[:])
}

// ServerFrameSize is the wire size of one unfragmented, unmasked frame (as
// servers send) carrying n payload bytes: what to add up for ExpectBytes.
func ServerFrameSize(n int) int {
	switch {
	case n <= 125:
		return 2 + n
	case n <= 0xFFFF:
		return 4 + n
	}
	return 10 + n
}

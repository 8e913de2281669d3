package refserver

import (
	"errors"
	"io"
	"unicode/utf8"
)

// closeInvalidPayload is RFC 6455's 1007: a text message whose payload is
// not UTF-8. Section 8.1: the endpoint "MUST _Fail the WebSocket
// Connection_"; gorilla does not check, so the server does.
const closeInvalidPayload = 1007

// errInvalidUTF8 ends the streaming of a text message whose bytes are not
// UTF-8.
var errInvalidUTF8 = errors.New("text message is not valid UTF-8")

// utf8Stream validates UTF-8 that arrives in pieces: a character split
// across two reads is held (at most 3 bytes) until the rest arrives.
type utf8Stream struct {
	pend [utf8.UTFMax]byte
	n    int
}

// seqLen is the length of the UTF-8 sequence lead byte b starts, 0 for a
// byte that cannot start one.
func seqLen(b byte) int {
	switch {
	case b < 0x80:
		return 1
	case b >= 0xC2 && b <= 0xDF:
		return 2
	case b >= 0xE0 && b <= 0xEF:
		return 3
	case b >= 0xF0 && b <= 0xF4:
		return 4
	}
	return 0
}

// feed checks the next piece; false as soon as the bytes so far cannot be
// UTF-8.
func (u *utf8Stream) feed(p []byte) bool {
	if u.n > 0 {
		need := seqLen(u.pend[0])
		for u.n < need && len(p) > 0 {
			u.pend[u.n] = p[0]
			u.n++
			p = p[1:]
		}
		if u.n < need {
			return true // still incomplete; checked once whole
		}
		if !utf8.Valid(u.pend[:u.n]) {
			return false
		}
		u.n = 0
	}
	// Hold back an incomplete character at the end of p.
	tail := 0
	for i := 1; i <= 3 && i <= len(p); i++ {
		b := p[len(p)-i]
		if b < 0x80 {
			break
		}
		if b >= 0xC0 { // a lead byte (or an invalid one: left to Valid)
			if need := seqLen(b); need > i {
				tail = i
			}
			break
		}
	}
	if !utf8.Valid(p[:len(p)-tail]) {
		return false
	}
	u.n = copy(u.pend[:], p[len(p)-tail:])
	return true
}

// done reports whether the message ended on a whole character.
func (u *utf8Stream) done() bool { return u.n == 0 }

// utf8Reader passes a text message through, failing with errInvalidUTF8
// (and passing on none of the offending piece) as soon as it is not UTF-8.
type utf8Reader struct {
	r io.Reader
	u utf8Stream
}

func (v *utf8Reader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	if n > 0 && !v.u.feed(p[:n]) {
		return 0, errInvalidUTF8
	}
	if err == io.EOF && !v.u.done() {
		return 0, errInvalidUTF8
	}
	return n, err
}

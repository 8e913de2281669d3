package jsonscan

import "unsafe"

// KeyEqual compares a raw key (as written between its quotes) with key.
// A raw key with escapes is decoded on the fly, without allocating.
func KeyEqual(raw []byte, key string) bool {
	if len(raw) == len(key) {
		return string(raw) == key
	}
	// An escape is always longer than what it decodes to, so only a longer
	// raw key with a backslash can still be equal.
	return len(raw) > len(key) && hasBackslash(raw) && rawStringEqual(raw, key)
}

func hasBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// rawStringEqual reports whether the JSON string contents raw (escapes as
// written) decode to s.
func rawStringEqual(raw []byte, s string) bool {
	var buf [4]byte
	j := 0
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			if j >= len(s) || s[j] != c {
				return false
			}
			i++
			j++
			continue
		}
		dec, n := unescapeOne(buf[:0], raw[i:])
		if n == 0 {
			return false
		}
		i += n
		if j+len(dec) > len(s) || s[j:j+len(dec)] != string(dec) {
			return false
		}
		j += len(dec)
	}
	return j == len(s)
}

// Unescape appends the decoded contents of a raw JSON string (as written
// between its quotes) to b; ok is false on a malformed escape.
func Unescape(b, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		var n int
		b, n = unescapeOne(b, raw[i:])
		if n == 0 {
			return b, false
		}
		i += n
	}
	return b, true
}

// unescapeOne decodes the escape at esc[0] == '\\', appending what it
// stands for to b, and returns the bytes of esc consumed, 0 when
// malformed.
func unescapeOne(b, esc []byte) ([]byte, int) {
	if len(esc) < 2 {
		return b, 0
	}
	switch esc[1] {
	case '"', '\\', '/':
		return append(b, esc[1]), 2
	case 'b':
		return append(b, '\b'), 2
	case 'f':
		return append(b, '\f'), 2
	case 'n':
		return append(b, '\n'), 2
	case 'r':
		return append(b, '\r'), 2
	case 't':
		return append(b, '\t'), 2
	case 'u':
		r, n := decodeU(esc)
		if n == 0 {
			return b, 0
		}
		return appendRune(b, r), n
	}
	return b, 0
}

// decodeU decodes \uXXXX (and a following low surrogate) at b, returning
// the rune and the bytes consumed, 0 when malformed. Invalid surrogates
// decode to U+FFFD, as encoding/json does.
func decodeU(b []byte) (rune, int) {
	r := hex4(b)
	if r < 0 {
		return 0, 0
	}
	if r >= 0xD800 && r < 0xDC00 {
		if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
			if r2 := hex4(b[6:]); r2 >= 0xDC00 && r2 < 0xE000 {
				return (r-0xD800)<<10 + (r2 - 0xDC00) + 0x10000, 12
			}
		}
		return 0xFFFD, 6
	}
	if r >= 0xDC00 && r < 0xE000 {
		return 0xFFFD, 6
	}
	return r, 6
}

// hex4 decodes the XXXX of a \uXXXX at b, -1 when b does not start with
// one.
func hex4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return -1
		}
	}
	return r
}

func appendRune(b []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return append(b, byte(r))
	case r < 0x800:
		return append(b, 0xC0|byte(r>>6), 0x80|byte(r)&0x3F)
	case r < 0x10000:
		return append(b, 0xE0|byte(r>>12), 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
	}
	return append(b, 0xF0|byte(r>>18), 0x80|byte(r>>12)&0x3F, 0x80|byte(r>>6)&0x3F, 0x80|byte(r)&0x3F)
}

// bytesToString views b as a string without copying, for a use that does
// not keep it.
func bytesToString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

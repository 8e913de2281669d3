package script

import (
	"bytes"
	"unsafe"
)

// The hot path reads a handful of named fields from every message. These
// functions find a field's raw value in a JSON object by scanning its bytes
// (the ideas of load/pusherclient's scanner): no decoding into Go values,
// no allocation. They check enough structure to find the value (strings,
// nesting, commas, colons), not the full JSON grammar: on valid JSON they
// agree with encoding/json (the fuzz test holds them to it), on invalid
// JSON they return ok=false or some value, never panic. The scan stops at
// the field it looks for, so what follows it is not checked: `{"type":"op"`
// finds "op". Keys are compared as bytes (after decoding escapes), so a key
// of invalid UTF-8 matches only itself.

// Lookup returns the raw bytes of the value at path in the JSON object
// msg: path[0] is a key of the top-level object, path[1] a key of the
// object that is its value, and so on. A string value is returned with
// its quotes (and escapes as written), any other value as written. With
// duplicate keys the first one wins.
func Lookup(msg []byte, path []string) (val []byte, ok bool) {
	if len(path) == 0 {
		return nil, false
	}
	i := 0
	for depth, key := range path {
		i = skipWS(msg, i)
		if i >= len(msg) || msg[i] != '{' {
			return nil, false
		}
		start, end, found := findKey(msg, i, key)
		if !found {
			return nil, false
		}
		if depth == len(path)-1 {
			return msg[start:end], true
		}
		msg = msg[start:end]
		i = 0
	}
	return nil, false
}

// findKey scans the object starting at msg[i] == '{' for key and returns
// the bounds of its value.
func findKey(msg []byte, i int, key string) (start, end int, ok bool) {
	i = skipWS(msg, i+1)
	if i < len(msg) && msg[i] == '}' {
		return 0, 0, false
	}
	for {
		if i >= len(msg) || msg[i] != '"' {
			return 0, 0, false
		}
		kEnd := endOfString(msg, i+1)
		if kEnd < 0 {
			return 0, 0, false
		}
		match := keyEqual(msg[i+1:kEnd], key)
		i = skipWS(msg, kEnd+1)
		if i >= len(msg) || msg[i] != ':' {
			return 0, 0, false
		}
		i = skipWS(msg, i+1)
		vEnd := endOfValue(msg, i)
		if vEnd < 0 {
			return 0, 0, false
		}
		if match {
			return i, vEnd, true
		}
		i = skipWS(msg, vEnd)
		if i >= len(msg) {
			return 0, 0, false
		}
		switch msg[i] {
		case ',':
			i = skipWS(msg, i+1)
		default: // '}' ends the object without the key; anything else is invalid
			return 0, 0, false
		}
	}
}

// keyEqual compares a raw key (as written between its quotes) with key.
// A raw key with escapes is decoded on the fly, without allocating.
func keyEqual(raw []byte, key string) bool {
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
		if i+1 >= len(raw) {
			return false
		}
		var dec []byte
		switch raw[i+1] {
		case '"', '\\', '/':
			buf[0] = raw[i+1]
			dec = buf[:1]
			i += 2
		case 'b':
			buf[0] = '\b'
			dec, i = buf[:1], i+2
		case 'f':
			buf[0] = '\f'
			dec, i = buf[:1], i+2
		case 'n':
			buf[0] = '\n'
			dec, i = buf[:1], i+2
		case 'r':
			buf[0] = '\r'
			dec, i = buf[:1], i+2
		case 't':
			buf[0] = '\t'
			dec, i = buf[:1], i+2
		case 'u':
			r, n := decodeU(raw[i:])
			if n == 0 {
				return false
			}
			dec, i = appendRune(buf[:0], r), i+n
		default:
			return false
		}
		if j+len(dec) > len(s) || s[j:j+len(dec)] != string(dec) {
			return false
		}
		j += len(dec)
	}
	return j == len(s)
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

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// endOfString returns the index of the quote closing a string whose
// contents start at i, or -1. It jumps from quote to quote with
// bytes.IndexByte (vectorised), and a quote is escaped exactly when an odd
// run of backslashes precedes it.
func endOfString(b []byte, i int) int {
	// Keys and short values end within a few bytes: a plain loop beats the
	// call into IndexByte there.
	for end := min(len(b), i+16); i < end; i++ {
		switch b[i] {
		case '"':
			return i
		case '\\':
			i++
		}
	}
	for i <= len(b) {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		q := i + j
		n := 0
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		i = q + 1
	}
	return -1
}

// endOfValue returns the index just past the JSON value starting at i, or
// -1. A scalar ends at the first byte that cannot continue it.
func endOfValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end := endOfString(b, i+1)
		if end < 0 {
			return -1
		}
		return end + 1
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end := endOfString(b, i+1)
				if end < 0 {
					return -1
				}
				i = end
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	start := i
	for i < len(b) {
		c := b[i]
		if (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' || c == '.' || c == 'E' {
			i++
			continue
		}
		break
	}
	if i == start {
		return -1
	}
	return i
}

// ParseInt reads a raw JSON integer value (as Lookup returns it). A
// fraction, an exponent, a string or an overflow is not an integer.
func ParseInt(raw []byte) (int64, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	neg := raw[0] == '-'
	i := 0
	if neg {
		i = 1
	}
	if i >= len(raw) {
		return 0, false
	}
	var v uint64
	for ; i < len(raw); i++ {
		c := raw[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (1<<63)/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// ValueEqual reports whether two raw JSON values are equal: byte for byte,
// or, for strings written with escapes, by their decoded contents. want is
// compact (the engine compacts the file's values once).
func ValueEqual(raw, want []byte) bool {
	if string(raw) == string(want) {
		return true
	}
	if len(raw) < 2 || raw[0] != '"' || len(want) < 2 || want[0] != '"' {
		return false
	}
	if !hasBackslash(raw) && !hasBackslash(want) {
		return false
	}
	// Rare: compare decoded contents. want is decoded into a stack buffer
	// when small; escaped expectations longer than that compare raw.
	var buf [256]byte
	w, ok := unescape(buf[:0], want[1:len(want)-1])
	if !ok {
		return false
	}
	return rawStringEqual(raw[1:len(raw)-1], bytesToString(w))
}

// unescape appends the decoded contents of a raw JSON string to b.
func unescape(b, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(raw) {
			return b, false
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			b = append(b, raw[i+1])
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, n := decodeU(raw[i:])
			if n == 0 {
				return b, false
			}
			b = appendRune(b, r)
			i += n
			continue
		default:
			return b, false
		}
		i += 2
	}
	return b, true
}

// bytesToString views b as a string without copying, for a comparison
// that does not keep it.
func bytesToString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// LookupTop finds several top-level keys of the object msg in one pass,
// stopping once all are found: out[i] is the raw value of keys[i], nil
// when absent. len(out) must be len(keys). It reports false when msg is
// not a JSON object (as far as it was scanned).
func LookupTop(msg []byte, keys []string, out [][]byte) bool {
	for i := range out {
		out[i] = nil
	}
	i := skipWS(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return false
	}
	i = skipWS(msg, i+1)
	if i < len(msg) && msg[i] == '}' {
		return true
	}
	left := len(keys)
	for {
		if i >= len(msg) || msg[i] != '"' {
			return false
		}
		kEnd := endOfString(msg, i+1)
		if kEnd < 0 {
			return false
		}
		raw := msg[i+1 : kEnd]
		i = skipWS(msg, kEnd+1)
		if i >= len(msg) || msg[i] != ':' {
			return false
		}
		i = skipWS(msg, i+1)
		vEnd := endOfValue(msg, i)
		if vEnd < 0 {
			return false
		}
		for k, key := range keys {
			if out[k] == nil && keyEqual(raw, key) {
				out[k] = msg[i:vEnd]
				left--
				break
			}
		}
		if left == 0 {
			return true
		}
		i = skipWS(msg, vEnd)
		if i >= len(msg) {
			return false
		}
		if msg[i] != ',' {
			return msg[i] == '}'
		}
		i = skipWS(msg, i+1)
	}
}

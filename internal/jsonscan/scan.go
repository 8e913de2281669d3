package jsonscan

import "bytes"

// SkipWS returns the index of the first byte at or after i that is not
// JSON whitespace (len(b) when there is none).
func SkipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// EndOfString returns the index of the quote closing a string whose
// contents start at i, or -1. A backslash escapes the byte after it; the
// escapes are not checked. It jumps from quote to quote with
// bytes.IndexByte (vectorised), and a quote is escaped exactly when an odd
// run of backslashes precedes it.
func EndOfString(b []byte, i int) int {
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

// EndOfNested returns the index just past the object or array that opens
// at b[i] ('{' or '['), or -1 when it is not closed. Strings inside are
// skipped; brackets are counted, not matched by kind.
func EndOfNested(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			end := EndOfString(b, i+1)
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

// EndOfValue returns the index just past the JSON value starting at i, or
// -1. A string ends after its closing quote, an object or array after its
// closing bracket (EndOfNested), and a scalar (number, true, false, null)
// at the first byte that cannot continue it; an empty scalar is -1.
func EndOfValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end := EndOfString(b, i+1)
		if end < 0 {
			return -1
		}
		return end + 1
	case '{', '[':
		return EndOfNested(b, i)
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

// The object walk: OpenObject finds the first member, ReadKey reads a
// member's key up to its value, the caller finds the value's end (with the
// scanner of its choice), and NextMember moves on to the next member.

// OpenObject skips whitespace from i and expects '{' there. It returns the
// index of the first member's key, whitespace skipped, or -1 when there is
// no '{'. For an empty object that index holds the '}'.
func OpenObject(b []byte, i int) int {
	i = SkipWS(b, i)
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	return SkipWS(b, i+1)
}

// ReadKey reads a member's `"key" :` at i and returns the key's contents
// as written (escapes undecoded) and the index of the value, whitespace
// skipped (it may be len(b)). ok is false when there is no key string or
// no colon.
func ReadKey(b []byte, i int) (key []byte, val int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	kEnd := EndOfString(b, i+1)
	if kEnd < 0 {
		return nil, 0, false
	}
	key = b[i+1 : kEnd]
	i = SkipWS(b, kEnd+1)
	if i >= len(b) || b[i] != ':' {
		return nil, 0, false
	}
	return key, SkipWS(b, i+1), true
}

// NextMember reads what follows a member's value that ends at i:
// whitespace, then ',' (more is true and next is the index of the next
// key, whitespace skipped) or '}' (more is false and next is the index of
// the '}'). Anything else, or the end of b, is malformed: ok is false.
func NextMember(b []byte, i int) (next int, more, ok bool) {
	i = SkipWS(b, i)
	if i >= len(b) {
		return i, false, false
	}
	switch b[i] {
	case ',':
		return SkipWS(b, i+1), true, true
	case '}':
		return i, false, true
	}
	return i, false, false
}

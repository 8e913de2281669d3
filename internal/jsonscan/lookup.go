package jsonscan

// Lookup returns the raw bytes of the value at path in the JSON object
// msg: path[0] is a key of the top-level object, path[1] a key of the
// object that is its value, and so on. A string value is returned with
// its quotes (and escapes as written), any other value as written. With
// duplicate keys the first one wins. The scan stops at the field it looks
// for, so what follows it is not checked: `{"type":"op"` finds "op". Keys
// are compared as bytes after decoding escapes (KeyEqual), so a key of
// invalid UTF-8 matches only itself.
func Lookup(msg []byte, path []string) (val []byte, ok bool) {
	if len(path) == 0 {
		return nil, false
	}
	for depth, key := range path {
		start, end, found := findKey(msg, key)
		if !found {
			return nil, false
		}
		if depth == len(path)-1 {
			return msg[start:end], true
		}
		msg = msg[start:end]
	}
	return nil, false
}

// findKey scans the object msg (whitespace before it allowed) for key and
// returns the bounds of its value.
func findKey(msg []byte, key string) (start, end int, ok bool) {
	i := OpenObject(msg, 0)
	if i < 0 || (i < len(msg) && msg[i] == '}') {
		return 0, 0, false
	}
	for {
		raw, v, ok := ReadKey(msg, i)
		if !ok {
			return 0, 0, false
		}
		vEnd := EndOfValue(msg, v)
		if vEnd < 0 {
			return 0, 0, false
		}
		if KeyEqual(raw, key) {
			return v, vEnd, true
		}
		// '}' ends the object without the key; anything else is invalid.
		next, more, _ := NextMember(msg, vEnd)
		if !more {
			return 0, 0, false
		}
		i = next
	}
}

// LookupTop finds several top-level keys of the object msg in one pass,
// stopping once all are found: out[i] is the raw value of keys[i], nil
// when absent. len(out) must be len(keys). It reports false when msg is
// not a JSON object (as far as it was scanned).
func LookupTop(msg []byte, keys []string, out [][]byte) bool {
	for i := range out {
		out[i] = nil
	}
	i := OpenObject(msg, 0)
	if i < 0 {
		return false
	}
	if i < len(msg) && msg[i] == '}' {
		return true
	}
	left := len(keys)
	for {
		raw, v, ok := ReadKey(msg, i)
		if !ok {
			return false
		}
		vEnd := EndOfValue(msg, v)
		if vEnd < 0 {
			return false
		}
		for k, key := range keys {
			if out[k] == nil && KeyEqual(raw, key) {
				out[k] = msg[v:vEnd]
				left--
				break
			}
		}
		if left == 0 {
			return true
		}
		next, more, ok := NextMember(msg, vEnd)
		if !more {
			return ok
		}
		i = next
	}
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
// compact (a caller compacts its expected values once).
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
	w, ok := Unescape(buf[:0], want[1:len(want)-1])
	if !ok {
		return false
	}
	return rawStringEqual(raw[1:len(raw)-1], bytesToString(w))
}

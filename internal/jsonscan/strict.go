package jsonscan

// ScanString scans the string literal whose opening quote is at b[i] as
// strictly as encoding/json, UTF-8 validity aside: an escape must be one
// of \" \\ \/ \b \f \n \r \t \uXXXX, and no byte below 0x20 may appear. It
// returns the index just past the closing quote and whether the literal
// holds an escape. On malformed input fault says what is wrong and end is
// the offset of the fault: the backslash of a bad escape, the control
// byte, or len(b) for an unterminated string.
func ScanString(b []byte, i int) (end int, esc bool, fault string) {
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, esc, ""
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return i, false, "unexpected end of input in a string"
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if hex4(b[i:]) < 0 {
					return i, false, `bad \u escape`
				}
				i += 6
			default:
				return i, false, "bad escape in a string"
			}
		case c < 0x20:
			return i, false, "control character in a string"
		default:
			i++
		}
	}
	return i, false, "unexpected end of input in a string"
}

// ScanNumber scans the number at b[i] by the JSON grammar: -?, then 0 or a
// digit run not starting with 0, then an optional fraction and exponent,
// each with at least one digit. It returns the index just past it, or
// ok=false and the offset where the grammar failed.
func ScanNumber(b []byte, i int) (end int, ok bool) {
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	at := func(i int) byte {
		if i < len(b) {
			return b[i]
		}
		return 0
	}
	if at(i) == '-' {
		i++
	}
	switch c := at(i); {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		digits()
	default:
		return i, false
	}
	if at(i) == '.' {
		i++
		if digits() == 0 {
			return i, false
		}
	}
	if c := at(i); c == 'e' || c == 'E' {
		i++
		if c := at(i); c == '+' || c == '-' {
			i++
		}
		if digits() == 0 {
			return i, false
		}
	}
	return i, true
}

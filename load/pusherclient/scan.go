package pusherclient

// ScanEvent extracts event, channel and data from a Pusher protocol
// message without allocating; see the package comment.
func ScanEvent(msg []byte) (event, channel, data []byte, ok bool) {
	i := skipWS(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return nil, nil, nil, false
	}
	i = skipWS(msg, i+1)
	if i < len(msg) && msg[i] == '}' {
		return nil, nil, nil, false
	}
	haveEvent := false
	for {
		if i >= len(msg) || msg[i] != '"' {
			return nil, nil, nil, false
		}
		kEnd := endOfString(msg, i+1)
		if kEnd < 0 {
			return nil, nil, nil, false
		}
		key := msg[i+1 : kEnd]
		i = skipWS(msg, kEnd+1)
		if i >= len(msg) || msg[i] != ':' {
			return nil, nil, nil, false
		}
		i = skipWS(msg, i+1)
		if i >= len(msg) {
			return nil, nil, nil, false
		}
		var val []byte
		isString := msg[i] == '"'
		if isString {
			end := endOfString(msg, i+1)
			if end < 0 {
				return nil, nil, nil, false
			}
			val, i = msg[i+1:end], end+1
		} else {
			end := endOfValue(msg, i)
			if end < 0 {
				return nil, nil, nil, false
			}
			val, i = msg[i:end], end
		}
		switch string(key) {
		case "event":
			if !isString {
				return nil, nil, nil, false
			}
			event, haveEvent = val, true
		case "channel":
			if isString {
				channel = val
			}
		case "data":
			data = val
		}
		i = skipWS(msg, i)
		if i >= len(msg) {
			return nil, nil, nil, false
		}
		switch msg[i] {
		case ',':
			i = skipWS(msg, i+1)
		case '}':
			return event, channel, data, haveEvent
		default:
			return nil, nil, nil, false
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// endOfString returns the index of the quote closing a string whose
// contents start at i, or -1.
func endOfString(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case '"':
			return i
		case '\\':
			i += 2
		default:
			i++
		}
	}
	return -1
}

// endOfValue returns the index just past the non-string JSON value starting
// at i (object, array, number, literal), or -1. It checks nesting and
// strings, not full JSON grammar.
func endOfValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			end := endOfString(b, i+1)
			if end < 0 {
				return -1
			}
			i = end
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // closes the enclosing object
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	if depth != 0 {
		return -1
	}
	return i
}

// IntField returns the integer value of the first key name in data, which
// may be the escaped contents of a JSON string or plain JSON; see the
// package comment.
func IntField(data []byte, name string) (int64, bool) {
	n := len(name)
	for i := 0; i+n+2 <= len(data); i++ {
		if data[i] != '"' || string(data[i+1:i+1+n]) != name {
			continue
		}
		j := i + 1 + n
		switch {
		case j < len(data) && data[j] == '"':
			j++
		case j+1 < len(data) && data[j] == '\\' && data[j+1] == '"':
			j += 2
		default:
			continue
		}
		j = skipWS(data, j)
		if j >= len(data) || data[j] != ':' {
			continue
		}
		j = skipWS(data, j+1)
		neg := false
		if j < len(data) && data[j] == '-' {
			neg, j = true, j+1
		}
		start := j
		var v int64
		for j < len(data) && data[j] >= '0' && data[j] <= '9' {
			if v > (1<<63-1)/10 {
				return 0, false
			}
			v = v*10 + int64(data[j]-'0')
			j++
		}
		if j == start || (j < len(data) && (data[j] == '.' || data[j] == 'e' || data[j] == 'E')) {
			return 0, false // not an integer
		}
		if neg {
			v = -v
		}
		return v, true
	}
	return 0, false
}

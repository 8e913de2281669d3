package pusherclient

import "github.com/ceiling-bench/ceiling/internal/jsonscan"

// ScanEvent extracts event, channel and data from a Pusher protocol
// message without allocating; see the package comment. Unlike
// jsonscan.Lookup it reads every member (the last duplicate wins), keys
// are compared as written, and a string value is returned without its
// quotes.
func ScanEvent(msg []byte) (event, channel, data []byte, ok bool) {
	i := jsonscan.OpenObject(msg, 0)
	if i < 0 || (i < len(msg) && msg[i] == '}') {
		return nil, nil, nil, false
	}
	haveEvent := false
	for {
		key, v, ok := jsonscan.ReadKey(msg, i)
		if !ok || v >= len(msg) {
			return nil, nil, nil, false
		}
		var val []byte
		isString := msg[v] == '"'
		if isString {
			end := jsonscan.EndOfString(msg, v+1)
			if end < 0 {
				return nil, nil, nil, false
			}
			val, i = msg[v+1:end], end+1
		} else {
			end := endOfValue(msg, v)
			if end < 0 {
				return nil, nil, nil, false
			}
			val, i = msg[v:end], end
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
		next, more, ok := jsonscan.NextMember(msg, i)
		if !ok {
			return nil, nil, nil, false
		}
		if !more {
			return event, channel, data, haveEvent
		}
		i = next
	}
}

// endOfValue returns the end of the non-string value starting at i: the
// index of the ',', '}' or ']' that ends it at this level, or the index
// just past the object or array it opens, or len(b); -1 when a string or
// an object in it is not closed. Unlike jsonscan.EndOfValue it does not
// check the scalar's bytes, and keeps whitespace before the delimiter: data
// is returned as the server wrote it.
func endOfValue(b []byte, i int) int {
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			end := jsonscan.EndOfString(b, i+1)
			if end < 0 {
				return -1
			}
			i = end
		case '{', '[':
			return jsonscan.EndOfNested(b, i)
		case '}', ']', ',':
			return i
		}
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
		j = jsonscan.SkipWS(data, j)
		if j >= len(data) || data[j] != ':' {
			continue
		}
		j = jsonscan.SkipWS(data, j+1)
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

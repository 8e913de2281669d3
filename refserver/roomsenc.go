package refserver

import (
	"strconv"

	"github.com/ceiling-bench/ceiling/pusher"
)

// Encoders for the /rooms server messages. Names and ids arrive already
// encoded as JSON strings (once per room or member), and client JSON
// (data, cursor, a patch id) is copied as it came, so a message is a few
// appends: no reflection, no per-member work.

func appendJSONString(dst []byte, s string) []byte { return pusher.AppendString(dst, s) }

// {"type":"joined","room":R,"role":"editor","version":V,"members":M[,"reason":"editor_cap"]}
func appendJoined(b, room []byte, editor bool, version uint64, members int, capped bool) []byte {
	b = append(b, `{"type":"joined","room":`...)
	b = append(b, room...)
	if editor {
		b = append(b, `,"role":"editor","version":`...)
	} else {
		b = append(b, `,"role":"viewer","version":`...)
	}
	b = strconv.AppendUint(b, version, 10)
	b = append(b, `,"members":`...)
	b = strconv.AppendInt(b, int64(members), 10)
	if capped {
		b = append(b, `,"reason":"editor_cap"`...)
	}
	return append(b, '}')
}

// {"type":"resync","version":V}
func appendResync(b []byte, version uint64) []byte {
	b = append(b, `{"type":"resync","version":`...)
	b = strconv.AppendUint(b, version, 10)
	return append(b, '}')
}

// {"type":"op","room":R,"from":F,"v":V,"ts":T,"data":D}
func appendOp(b, room, from []byte, v uint64, ts int64, data []byte) []byte {
	b = append(b, `{"type":"op","room":`...)
	b = append(b, room...)
	b = append(b, `,"from":`...)
	b = append(b, from...)
	b = append(b, `,"v":`...)
	b = strconv.AppendUint(b, v, 10)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, `,"data":`...)
	b = append(b, data...)
	return append(b, '}')
}

// {"type":"ack","id":ID,"v":V,"ts":T}
func appendAck(b, id []byte, v uint64, ts int64) []byte {
	b = append(b, `{"type":"ack","id":`...)
	b = append(b, id...)
	b = append(b, `,"v":`...)
	b = strconv.AppendUint(b, v, 10)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, ts, 10)
	return append(b, '}')
}

// {"id":F,"ts":T,"cursor":C}: one user of a presence message.
func appendPresenceEntry(b, id []byte, ts int64, cursor []byte) []byte {
	b = append(b, `{"id":`...)
	b = append(b, id...)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, `,"cursor":`...)
	b = append(b, cursor...)
	return append(b, '}')
}

// {"type":"presence","room":R,"ts":T,"n":K,"users":[ — the entries and "]}" follow.
func appendPresenceHead(b, room []byte, ts int64, n int) []byte {
	b = append(b, `{"type":"presence","room":`...)
	b = append(b, room...)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, `,"users":[`...)
}

// {"type":"error","code":C,"reason":R[,"id":ID][,"detail":D]}; id is the
// patch id as the client sent it (nil: none).
func appendRoomError(b []byte, code int, reason string, id []byte, detail string) []byte {
	b = append(b, `{"type":"error","code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, reason)
	if id != nil {
		b = append(b, `,"id":`...)
		b = append(b, id...)
	}
	if detail != "" {
		b = append(b, `,"detail":`...)
		b = appendJSONString(b, detail)
	}
	return append(b, '}')
}

package pusher

import (
	"strconv"

	"github.com/ceiling-bench/ceiling/internal/jsonscan"
)

// The Append* encoders build a message into dst without reflection, so a
// server can encode an event once per channel and write the same bytes to
// every subscriber. Their output is what encoding/json would produce for a
// Message with HTML escaping off (a test holds them to that).

// AppendEvent appends {"event":name,"channel":channel,"data":data} with data
// encoded as a JSON string, the shape subscribers receive.
func AppendEvent(dst []byte, name, channel, data string) []byte {
	dst = append(dst, `{"event":`...)
	dst = AppendString(dst, name)
	if channel != "" {
		dst = append(dst, `,"channel":`...)
		dst = AppendString(dst, channel)
	}
	dst = append(dst, `,"data":`...)
	dst = AppendString(dst, data)
	return append(dst, '}')
}

// AppendConnectionEstablished appends connection_established, whose data is
// a JSON string holding {"socket_id":...,"activity_timeout":...}.
func AppendConnectionEstablished(dst []byte, socketID string, activityTimeout int) []byte {
	inner := make([]byte, 0, 64)
	inner = append(inner, `{"socket_id":`...)
	inner = AppendString(inner, socketID)
	inner = append(inner, `,"activity_timeout":`...)
	inner = strconv.AppendInt(inner, int64(activityTimeout), 10)
	inner = append(inner, '}')
	return AppendEvent(dst, EventConnectionEstablished, "", string(inner))
}

// AppendSubscriptionSucceeded appends subscription_succeeded for channel;
// data is the JSON string "{}" as public channels carry no member list.
func AppendSubscriptionSucceeded(dst []byte, channel string) []byte {
	return AppendEvent(dst, EventSubscriptionSucceeded, channel, "{}")
}

// AppendPong appends pusher:pong with data "{}".
func AppendPong(dst []byte) []byte {
	return AppendEvent(dst, EventPong, "", "{}")
}

// AppendPing appends pusher:ping with data "{}".
func AppendPing(dst []byte) []byte {
	return AppendEvent(dst, EventPing, "", "{}")
}

// AppendError appends pusher:error with an object as data:
// {"message":...,"code":...}; code 0 is written as null, Pusher's way of
// saying the error does not close the socket.
func AppendError(dst []byte, code int, message string) []byte {
	dst = append(dst, `{"event":"pusher:error","data":{"message":`...)
	dst = AppendString(dst, message)
	dst = append(dst, `,"code":`...)
	if code == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, int64(code), 10)
	}
	return append(dst, "}}"...)
}

// AppendSubscribe appends pusher:subscribe (or, with unsubscribe set,
// pusher:unsubscribe) for a public channel.
func AppendSubscribe(dst []byte, channel string, unsubscribe bool) []byte {
	ev := EventSubscribe
	if unsubscribe {
		ev = EventUnsubscribe
	}
	dst = append(dst, `{"event":`...)
	dst = AppendString(dst, ev)
	dst = append(dst, `,"data":{"channel":`...)
	dst = AppendString(dst, channel)
	return append(dst, "}}"...)
}

// AppendString appends s as a JSON string literal, escaping like
// encoding/json without HTML escaping: invalid UTF-8 becomes U+FFFD and
// U+2028/U+2029 are escaped. The escaper is internal/jsonscan's.
func AppendString(dst []byte, s string) []byte { return jsonscan.AppendString(dst, s) }

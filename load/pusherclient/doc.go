// Package pusherclient is the generator's side of Pusher Channels: a signed
// REST publisher and a zero-allocation scanner for the events subscribers
// receive. Signing is package pusher's (the same code refserver verifies
// with); this package only does the HTTP and the byte scanning.
//
// # Publishing
//
//	c := pusherclient.New("http://127.0.0.1:6001", "app-id", "app-key", "app-secret", nil)
//	err := c.Trigger(ctx, pusher.Event{Name: "tick", Channel: "ch-0", Data: `{"ts":123}`})
//	err = c.TriggerBatch(ctx, events) // POST /apps/{id}/batch_events
//
// baseURL is http://host:port (a ws:// URL is accepted and mapped to
// http://; any path is kept as a prefix). Each request is signed with
// pusher.Sign at the current Unix second. The JSON body is built by hand
// (the same bytes encoding/json would write for pusher.Event and
// pusher.BatchEvents) into a pooled buffer that goes back to the pool only
// when both the call and the HTTP transport are done with it, so a Client
// is safe for concurrent use and the body costs no allocation in the steady
// state. (net/http itself still allocates per request.) A nil httpClient
// means a client with keep-alive pools sized for a few hundred publishers
// and no overall timeout: bound each call with ctx.
//
// A 2xx answer is success (the response body is drained so the connection
// is reused) unless its body says otherwise: some servers answer a bad
// signature or an unknown app id with 200 and {"code":401,...} in the
// body. A 2xx body that is a JSON object with a numeric "code" of 400 or
// more, or a non-empty "error", is a *BodyError{Status, Code, Body}; the
// usual {} is recognised without decoding. Any other status is a
// *HTTPError{Status, Body}, Body being the first 4 KiB of the response.
// Transport failures are returned wrapped with %w.
//
// # Counting failures
//
// Reason(err) maps any error from this package to a stable counter key:
// "status_<code>" (so "status_401", "status_429"), "body_code_<code>" (a
// *BodyError with a code; "body_error" without one), "ECONNRESET", "EPIPE",
// "ECONNREFUSED", "timeout" (context deadline or a net timeout), "canceled"
// (context cancelled), or "other"; "" for nil. These are the keys of
// load.FanoutSummary.HTTPFailures.
//
// # Receiving
//
//	event, channel, data, ok := pusherclient.ScanEvent(msg)
//	ts, ok := pusherclient.IntField(data, "ts")
//
// ScanEvent reads a protocol message such as
// {"event":"tick","channel":"ch-0","data":"{\"ts\":123}"} without
// allocating. The three results alias msg. event and channel are the raw
// contents of their JSON strings (escape sequences left as they are: event
// and channel names never need them). data is the raw, still escaped
// contents of the data string, or, when data is not a string (pusher:error,
// pusher:subscribe carry objects), the raw JSON text of the value. Fields
// may come in any order and unknown fields are skipped; ok is false when
// msg is not a JSON object or has no string "event". A missing channel or
// data is returned as nil.
//
// IntField finds "name":<integer> in data, in its escaped form
// ({\"ts\":123}) or plain ({"ts":123}), without unescaping or allocating,
// so a subscriber can pull the publish timestamp out of every delivery for
// nothing. It matches the first key equal to name at any depth.
package pusherclient

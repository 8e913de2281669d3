// Package pusher is the subset of the Pusher Channels protocol (version 7)
// that a fan-out benchmark needs, shared by the reference server
// (refserver) and the generator (load) so both sides agree byte for byte.
//
// It holds three things and no I/O:
//
//   - Request signing for the REST API (Sign, Verify, StringToSign): the
//     HMAC-SHA256 scheme of Pusher's "Generating authentication signatures",
//     checked in tests against the published worked example.
//   - The REST envelopes: Event for POST /apps/{id}/events and BatchEvents
//     for POST /apps/{id}/batch_events.
//   - The WebSocket message shapes (Message and the Data types), event
//     names, and the error and close codes, plus encoders that build a
//     message once so a server can write the same bytes to every subscriber.
//
// Data fields follow the protocol: an event's data is a JSON string (the
// application payload encoded once more), connection_established's data is
// a JSON string holding an object, while pusher:subscribe and pusher:error
// carry an object.
package pusher

// Package script runs declarative scenario files: a JSON file describes a
// JSON-over-WebSocket protocol (connect and handshake, roles grouped into
// rooms, sends with message templates and rates, the kinds of received
// messages and what to read from them, rate limits, HTTP sends with HMAC
// signing), and `ceiling load --scenario-file F` drives a server with it.
// docs/scenarios.md is the reference of the format.
//
// # Compiled once, cheap per message
//
// Parse turns the file into a Spec: every template is compiled into
// segments (literal bytes and variables) that Append renders into a reused
// buffer; every match and field path is compiled into key lists. On the
// hot path a received message is never decoded: jsonscan.Lookup and
// LookupTop scan its bytes for the named fields only (internal/jsonscan,
// held to encoding/json by a fuzz test), each match path is looked up at
// most once per message, and matchers test the path the file matches on
// most (usually "type") first.
// Matching, extracting and recording allocate nothing (TestReceiveAllocs;
// on the event loops from the socket on, TestLoopReceiveAllocs), nor does
// a send whose ack is awaited by id (TestSendAllocs: ids are remembered
// by a 64-bit hash); BenchmarkReceive puts the cost per message beside
// echo's.
//
// # Running
//
// Connect dials and runs the handshake steps, blocking, before the
// window. Load then drives each connection through its handler
// (handler.go), which has the shape of an event loop's: message (a data
// message arrived: classify it — automatic answers, rate-limited, server
// errors, then receive kinds in file order — and record it; answers are
// written straight back; a closed-loop ack releases the next send; with
// connect.split "newline" each line of the message is one), timer (the
// connection's one timer came due: the open-loop sends due by then, each
// stamped with its scheduled time and its lateness recorded as schedule
// lag; or the next closed-loop send, after an ack or an await timeout) and
// closed (the connection ended: an error before the drain counts, and as
// dropped before the window's end; the drain itself does not).
//
// Two engines call the handlers (--io):
//
//   - loop (the default on Linux, loop.go): the WebSocket connections are
//     spread over load/evloop's event loops, one per GOMAXPROCS. A loop
//     calls the handlers of its connections one at a time, so each loop
//     has its own statistics shard and nothing on the path of a message
//     takes a lock or allocates (TestLoopReceiveAllocs, from the socket
//     to the histograms).
//   - goroutines (goroutines.go): a reader and a writer goroutine per
//     connection; the reader calls message and closed, the writer timer
//     and every write (wsconn's one writer), the reader handing it the
//     answers and the closed-loop releases. Shards, a few per CPU, are
//     locked. It runs where epoll does not, and it carries, whatever
//     --io says, the connections that block: roles without a WebSocket
//     (HTTP senders) and WebSocket roles with an HTTP send.
//
// The loops time each send to its scheduled instant (a timerfd), so at a
// low rate every send is a wake-up of its own, where the goroutines' Go
// timers (up to about a millisecond late) send several per wake-up: on
// rooms at 200 users the loops' schedule lag p50 was about 15 times
// smaller and their CPU per message 1.5 to 1.8 times higher, all of it
// kernel time (docs/efficiency.md, section 4); --io goroutines is there
// for a run that would rather spend less. Finish
// merges the shards into summary.kinds; generator.engine and
// generator.loops say which engine ran and how busy its loops were.
//
// # Bad files
//
// Every error of a file names the JSON path of the bad field
// ("roles[1].share: ..."); Params.Validate adds the flag and the file name
// ("--scenario-file rooms.json: roles[1].share: ...") and wraps ErrBadFile.
package script

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
// hot path a received message is never decoded: Lookup and LookupTop scan
// its bytes for the named fields only (scan.go, held to encoding/json by a
// fuzz test), each match path is looked up at most once per message, and
// matchers test the path the file matches on most (usually "type") first.
// Matching, extracting and recording allocate nothing (TestReceiveAllocs);
// BenchmarkReceive puts the cost per message beside echo's.
//
// # Running
//
// Each WebSocket connection has a reader goroutine and a writer goroutine.
// The reader classifies every message (automatic answers, rate-limited,
// server errors, then receive kinds in file order) and records it; the
// writer is the connection's only writer (wsconn's contract): it runs the
// role's sends on their schedules (open loop, stamped with the scheduled
// time) or one by one awaiting their acks (closed loop), and writes the
// automatic answers the reader hands it. Statistics go to shards, a few
// per CPU, each with one histogram per kind under a lock that only its
// own connections take; Finish merges them into summary.kinds.
//
// # Bad files
//
// Every error of a file names the JSON path of the bad field
// ("roles[1].share: ..."); Params.Validate adds the flag and the file name
// ("--scenario-file rooms.json: roles[1].share: ...") and wraps ErrBadFile.
package script

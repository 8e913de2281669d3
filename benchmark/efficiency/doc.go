// Command efficiency is `make bench`: it measures how cheap the generator's
// wire code is, each figure next to a baseline measured in the same run on
// the same machine, because only ratios taken together mean anything on a
// shared, noisy host.
//
//  1. Receive path: messages per second one pinned core (GOMAXPROCS=1)
//     absorbs from a raw TCP server, pinned to another core, that streams
//     pre-framed 64-byte messages as fast as the socket takes them; load/wsconn
//     against a plain gorilla/websocket NextReader + io.Copy(io.Discard)
//     loop, plus read syscalls per message.
//  2. Send path: frames per second one pinned core writes at batch 100 to a
//     sink that discards; wsconn.WriteBatch (one write per batch) against
//     gorilla WriteMessage (one write per frame).
//  3. Echo against refserver: refserver pinned to one core and the
//     generator to another, batch 1, 10 and 100; throughput and each side's
//     user and kernel CPU per message from /proc/<pid>/stat over the same
//     window, and the generator's read syscalls per message. The generator
//     is `ceiling load` (bin/ceiling) when it is there, else a small echo
//     loop over wsconn in this program. At each batch the syscall-only
//     floor runs first (floor.go): the same pre-framed masked batch written
//     with write(2), the replies read with read(2) into one buffer once
//     SO_RCVLOWAT says the batch is there, counted by bytes, nothing parsed
//     or recorded. Every generator's CPU per message is then printed as a
//     multiple of the floor's (user+system, and user alone) and its user
//     CPU as a fraction of refserver's, against issue 11's goal at batch
//     >= 10: total <= 1.25x the floor, user <= 1/3 of refserver's.
//  4. Scenario file against echo: the generator's CPU per message received
//     running benchmark/scenarios/rooms.json (-rooms-users users) against
//     refserver /rooms, then echo over as many connections in an open loop
//     at the message rate rooms received, so the difference is what the
//     scenario engine costs.
//  5. NATS JetStream over WebSocket: bin/nats-server (built by make from
//     go.mod) pinned to the server's core, `ceiling load --scenario produce`
//     and `--scenario stream` (nats.go) to the generator's; each side's
//     user+system CPU per message the generator counted, and their ratio:
//     above 1 the generator saturates first (docs/nats.md).
//  6. Memory per connection: `ceiling load --scenario echo` holding
//     -mem-conns connections (10,000 and 20,000) that each send one message
//     a second (open loop) against a fresh refserver, per -mem-io mode; the
//     generator's VmRSS and VmHWM at 90% of the window, minus the same at
//     100 connections, per connection, and refserver's VmRSS per
//     connection for context (memory.go). -mem-only runs only this
//     section, -skip-mem skips it.
//
// Every measured party is a separate process started through
// pinning.Command, so its affinity is set before its program runs and it
// dies with this one (Pdeathsig). The roles (stream server, sink, receiver,
// sender, echo loop) are this same binary re-run with -role; the parent
// only orchestrates and reads the children's JSON result lines, so its own
// goroutines never share a core with a measurement.
//
// Flags: -duration (measured window per point, default 2s),
// -echo-duration (the same for section 3, default 4s), -warmup
// (default 500ms), -reps (interleaved repetitions of 1 and 2, default 2),
// -echo-conns (default 16), -generator auto|ceiling|builtin, -ceiling and
// -refserver (binaries; refserver is built into a temp dir when missing),
// -ceiling-base (section 3 becomes an A-B-A-B of that build's event loops
// against -ceiling's, beside the floor),
// -skip-echo, -only echo (section 3 alone), -mem-conns, -mem-io,
// -mem-duration (default 10s), -mem-only, -skip-mem.
package main

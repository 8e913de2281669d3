// Package reactor drives the closed echo loop of `ceiling load --io
// reactor`: one goroutine owns a set of connections and drives them with its own epoll, so no goroutine parks
// and wakes per connection.
//
// Why: with a goroutine per connection the generator's user CPU per
// message at small batches is mostly the Go runtime's wake-up path
// (netpoller park/unpark and the scheduler), not framing or parsing, which
// cost about 9 ns a frame. One epoll_wait returns every connection that
// has replies, and the reactor handles them in a loop on one thread.
//
// Shape:
//
//	r, err := reactor.New(reactor.Config{...}, rec) // epoll + eventfd
//	err = r.Add(conn, poolStart)                     // after wsconn.Dial
//	r.Run(ctx)                                       // until done, drained or cancelled
//
// Add takes the socket out of Go's netpoller (wsconn.Conn.Detach: a
// non-blocking duplicate of its descriptor, plus any frames that arrived
// with the handshake). Run sends each connection's first batch, then
// reads whatever epoll reports readable, parses frames with
// wsconn.ParseHeader (the one frame parser), and, when a batch's last
// reply is in, frames the next batch (wsconn.Conn.AppendFrame, fresh masks)
// and writes it. A write the socket does not take whole waits for
// EPOLLOUT. Pings are answered with pongs; a close frame is answered and
// ends the connection.
//
// Measurement rules are those of the goroutine closed loop: a batch is
// measured when it was sent inside [Window.Start, Window.End); no batch is
// sent at or after End; replies are awaited until Window.Drain, when every
// connection still waiting fails with a timeout. The latency of a message
// is the time of the read that brought it minus its batch's send time.
// With Config.WakePerBatch (the default of `ceiling load`, as in the
// goroutine loop) each socket's SO_RCVLOWAT is the reply bytes still
// missing, so epoll reports the connection once its whole batch is back:
// one read per batch, and every message of the batch is timed at its
// completion. Without it (--eager-reads) the reactor reads whatever has
// arrived, and each message is timed on its own. Results go to a Recorder
// that only this goroutine calls, so recording takes no lock.
//
// # Syscalls and the Go scheduler
//
// The sockets are non-blocking, so read and write are raw syscalls
// (unix.RawSyscall), skipping the runtime's entersyscall/exitsyscall. So
// is the loop's epoll_wait, always with a zero timeout: a busy generator
// nearly always finds connections ready. When none is, the reactor parks
// in Go's netpoller on its epoll descriptor (an epoll descriptor is itself
// pollable) until it has events or the drain deadline passes: one park
// and wake-up per idle wait of the whole reactor instead of one per
// connection, and the P stays free for the process's other goroutines
// (the engine's observer; an in-process server in tests). Two designs were
// measured and dropped: a raw blocking epoll_wait held the P and starved
// those goroutines (an in-process echo server got 390 messages through in
// 200 ms instead of 117,000), and a runtime-aware blocking unix.EpollWait
// paid the P hand-off and sysmon's 20 µs polling on every wait (make
// bench: 0.68x and 0.76x the goroutine loop's user CPU per message at
// batch 1 and 10, against 0.3x to 0.55x with the other two). The
// goroutine is not locked to its thread: a locked goroutine that parks
// costs two thread hand-offs per wake-up. Cancellation writes an eventfd in the reactor's epoll set, so
// Run returns promptly.
//
// Limits: frames must be unfragmented and fit the read buffer (sized for
// --record-size); a fragmented message is a protocol error here. Linux
// only: elsewhere New returns an error and Supported is false.
package reactor

// Package evloop is the load generator's one event-loop engine: every
// WebSocket connection of the closed and open loops (echo, fanout's
// subscribers, script) is driven by a few loops, one per generator core,
// each with its own epoll set, instead of a goroutine (or two) per
// connection. It replaced load/reactor, which drove echo's closed loop
// only, and generalises its measured design.
//
// Why: with a goroutine per connection the generator's user CPU per
// message at small batches is mostly the Go runtime's wake-up path
// (netpoller park/unpark and the scheduler), not framing or parsing, which
// cost about 9 ns a frame. One epoll_wait returns every connection that
// has data, and a loop handles them in turn on one thread. Memory follows
// the same idea: a goroutine per connection holds a stack and a read
// buffer each; a loop holds one read buffer for all its connections.
//
// Shape:
//
//	e, err := evloop.New(evloop.Config{Now: load.Mono, Drain: w.Drain, Loops: n})
//	c, err := e.Add(ws, handler) // after wsconn.Dial; round-robin over the loops
//	c.SetTimer(when)             // e.g. the first send
//	e.Run(ctx)                   // until every connection ended, the drain or ctx
//	st := e.Stats()              // busy fraction per loop, lag histogram
//
// A Handler is one connection's protocol logic (echo's batches, a Pusher
// subscriber, a script's steps): Message for each complete data message,
// Timer when the connection's one timer comes due, Closed once at its
// end. It runs on its loop's goroutine and must not block; per-loop state
// (a load.Recorder) is picked by Conn.Loop() and needs no lock.
//
// # A loop
//
// Add takes the socket out of Go's netpoller (wsconn.Conn.Detach: a
// non-blocking duplicate of its descriptor, plus any frames that arrived
// with the handshake, which are handled first). Each pass of a loop runs
// the timers that are due (a min-heap, one entry per connection), arms
// the loop's timerfd for the earliest remaining one, and waits for
// events; then it reads every connection epoll reported, parses frames
// with wsconn.ParseHeader (the one frame parser) and hands each data
// message to the handler.
//
//   - Reads go into one read buffer per loop (256 KiB). A connection keeps
//     a private buffer, from the loop's free lists, only while a partial
//     frame is pending between reads; a frame larger than the shared buffer
//     is read straight into a buffer of its size. Fragmented messages are
//     reassembled (up to wsconn.DefaultMaxMessageSize; larger is close
//     1009).
//   - Writes go straight to the socket. What it does not take is queued in
//     a private buffer and written on EPOLLOUT, which is watched only
//     while that queue exists; later sends queue behind it.
//   - Pings are answered with pongs; a close frame is answered with the
//     same code and ends the connection (Closed gets the *wsconn.CloseError).
//   - SetLowWater sets SO_RCVLOWAT (less the bytes of a partial frame
//     already held): echo's closed loop asks for a whole batch's replies,
//     so epoll reports the connection once per batch and one read takes
//     them all.
//
// Nothing on the read, dispatch, timer or write paths allocates once the
// free lists and the heap have grown (tested with testing.AllocsPerRun
// against a loopback server).
//
// # Syscalls, timers and the Go scheduler
//
// The sockets are non-blocking, so read and write are raw syscalls
// (unix.RawSyscall), skipping the runtime's entersyscall/exitsyscall. So
// is the loop's epoll_wait, always with a zero timeout: a busy generator
// nearly always finds connections ready. When none is, the loop parks in
// Go's netpoller on its epoll descriptor (an epoll descriptor is itself
// pollable) until it has events or the drain deadline passes: one park
// and wake-up per idle wait of the whole loop instead of one per
// connection, and the P stays free for the process's other goroutines
// (the engine's observer, REST publishers, an in-process server in
// tests). Two designs were measured and dropped (for load/reactor): a raw
// blocking epoll_wait held the P and starved those goroutines (an
// in-process echo server got 390 messages through in 200 ms instead of
// 117,000), and a runtime-aware blocking unix.EpollWait paid the P
// hand-off and sysmon's 20 µs polling on every wait (make bench: 0.68x and
// 0.76x the goroutine loop's user CPU per message at batch 1 and 10,
// against 0.3x to 0.55x with the other two). The goroutine is not locked
// to its thread: a locked goroutine that parks costs two thread hand-offs
// per wake-up.
//
// Timers wake the loop through a timerfd in its epoll set, armed for the
// earliest timer (one timerfd_settime when that changes for an earlier
// one or fires) but at least 200 µs ahead, the open loop's pacing-clock
// rule: timers due closer together run together, at most that late, so a
// high rate costs at most 5,000 timer wake-ups per second per loop. Not a
// Go timer or a deadline: an idle Go process waits for its timers in
// epoll_wait with a timeout in whole milliseconds, which would add up to
// 1 ms of the runtime's lag to every open-loop send (load/clockwork.go). Cancellation writes an eventfd in the epoll set, so
// Run returns promptly.
//
// # Evidence: busy fraction and lag
//
// A loop's busy fraction is 1 - (time parked waiting for events / the
// window), counted inside Config.Window only (a loop whose connections
// all ended waits from then on): a loop near 1 never waited, so it, not
// the server, set the pace. Its lag is the time from ready to handled: from
// epoll_wait returning a connection to that connection's read starting
// (the first connection a wait returns is read at once, at the same clock
// reading: 1 ns, the histogram's floor, without a reading of its own),
// and from a timer's due time to its Timer call, recorded in an
// HdrHistogram inside the window only. The engine windows both itself, on
// the loop's own clock readings, so the figures need no snapshot at the
// window's edges; Snapshot gives cumulative counters (reads, messages,
// timers, wait time) for callers that want their own.
//
// Linux only: elsewhere New returns an error and Supported is false.
package evloop

// Package reactor drives the closed echo loop of `ceiling load --io
// reactor`: one goroutine, locked to its OS thread, owns a set of
// connections and drives them with its own epoll, so no goroutine parks
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
// is the time of the read that brought it minus its batch's send time, per
// message, as with --eager-reads (the reactor never waits for a whole
// batch before parsing). Results go to a Recorder that only this goroutine
// calls, so recording takes no lock.
//
// Limits: frames must be unfragmented and fit the read buffer (sized for
// --record-size); a fragmented message is a protocol error here. Linux
// only: elsewhere New returns an error and Supported is false.
package reactor

// Package wsconn is the generator's own RFC 6455 WebSocket client codec
// (ws:// only, no extensions), written for a load generator's hot path:
// batches framed into one write, reads parsed from one large buffer, no
// allocation per message in either direction.
//
// # Dialing
//
//	c, err := wsconn.Dial(ctx, "ws://127.0.0.1:6001/echo", wsconn.Options{})
//
// Dial opens TCP, sends the HTTP/1.1 upgrade request itself (random
// Sec-WebSocket-Key, Sec-WebSocket-Version 13) and verifies the 101 response
// and its Sec-WebSocket-Accept. Bytes the server sent right behind the 101
// response (Pusher's pusher:connection_established, say) stay in the read
// buffer and come out of the first ReadMessage. A non-101 answer is a
// *HandshakeError carrying the status and the start of the body. ctx bounds
// the dial and the handshake only; Options.HandshakeTimeout (default 10 s)
// applies when ctx has no deadline.
//
// # Source addresses
//
// Against one server address and port, each local address has one
// ephemeral port range (about 28,000 ports by default), so one address
// caps the connections. SourceAddrs spreads dials round-robin over several
// (127.0.0.1..127.0.0.N on loopback need no setup), binding each with
// IP_BIND_ADDRESS_NO_PORT so the kernel picks the port at connect time:
//
//	src := wsconn.NewSourceAddrs(addrs)
//	c, err := wsconn.Dial(ctx, url, wsconn.Options{Source: src})
//	ctx = wsconn.WithSourceAddrs(ctx, src) // or: every Dial under ctx
//
// # Buffers
//
// A Conn starts with a 4 KiB read buffer, enough for the upgrade response
// and for small messages at a modest rate; it grows fourfold, up to
// Options.ReadBufferSize, whenever one read fills it (more is waiting than
// it holds) or a frame does not fit, so a streaming connection reaches the
// full buffer within a few reads while ten thousand connections of small
// messages hold 4 KiB each. The first WriteBatch or WriteMessage allocates
// the write buffer. A Conn handed to an event loop with Detach (Linux)
// holds neither, and Detach drops what it had: the loop owns the socket.
//
// # Writing
//
// Client frames are always masked (RFC 6455 5.3) with a fresh 32-bit key per
// frame from a fast non-cryptographic PRNG (wyrand) seeded per Conn from
// crypto/rand; the XOR runs eight bytes at a time. Every frame is final (no
// outgoing fragmentation).
//
//	buf = c.AppendFrame(buf[:0], wsconn.OpText, p1) // frame into your buffer
//	buf = c.AppendFrame(buf, wsconn.OpText, p2)
//	err = c.Write(buf)                              // one write syscall for the batch
//
//	err = c.WriteBatch(wsconn.OpText, payloads)     // same, into a per-Conn buffer
//	err = c.WriteMessage(wsconn.OpBinary, p)        // one frame, per-Conn buffer
//
// AppendFrame does not touch the socket; Write sends bytes you framed. The
// payload slices are only read.
//
// # Reading
//
//	op, payload, err := c.ReadMessage()
//
// ReadMessage returns the next data message (OpText or OpBinary). The
// payload aliases the Conn's read buffer (up to Options.ReadBufferSize,
// default 256 KiB; see Buffers) and is valid only until the next
// ReadMessage call; copy it to keep it. Fragmented messages, and frames
// larger than ReadBufferSize, are reassembled into a second per-Conn
// buffer that is reused (it grows to the largest message seen, capped by
// Options.MaxMessageSize, default 64 MiB).
// Control frames never reach the caller: a ping is answered with a pong
// carrying the same payload, a pong is dropped, and a close frame is
// answered with a close echoing its code and returned as a *CloseError
// {Code, Text}. A connection that ends without a close frame returns the
// transport's error (io.EOF, ECONNRESET...) wrapped with %w. After the
// first error every later ReadMessage returns the same error.
//
// Server frames must be unmasked and use no RSV bits; a violation is a
// *ProtocolError (and the Conn answers with close 1002).
//
// # Read-ahead: waking once per batch
//
// An eager reader pays a read syscall and a scheduler wake-up for every
// segment the server writes, which for a server that writes each message
// on its own is one per message. A caller that knows how many bytes it is
// waiting for (a closed-loop echo that sent a batch) can say so:
//
//	c.WriteBatch(wsconn.OpText, batch)
//	c.ExpectBytes(len(batch) * wsconn.ServerFrameSize(size))
//	for range batch { c.ReadMessage() }
//
// ReadMessage then sets SO_RCVLOWAT to the bytes still missing before each
// read, so the kernel wakes it once when they are all there (make bench:
// one read per batch instead of about one per two messages). Messages that
// arrived early are returned late, so this is for throughput runs, not for
// per-message latency; an expectation the peer does not meet blocks until
// a read deadline. ExpectBytes(0) returns to eager reads. Linux/unix only;
// LowWaterErr reports why it is off.
//
// # Counters
//
// Reads() is the number of net.Conn.Read calls made after the handshake
// (each one read syscall that returned data or an error; a Read that finds
// the socket empty also costs one EAGAIN read before it parks, which is
// not counted), Messages() the number of data messages ReadMessage
// returned. Reads()/Messages() is the read syscalls per message that
// `make bench` reports. Both are safe to call from any goroutine.
//
// # Concurrency contract
//
//   - One reader goroutine calls ReadMessage.
//   - One writer goroutine calls AppendFrame, WriteBatch and WriteMessage
//     (they share the per-Conn write buffer and PRNG).
//   - Write, Close and CloseWithCode are safe from any goroutine: every
//     write to the socket happens under a small mutex, which is also what
//     makes the reader's pong and close replies safe against the writer.
//     The lock is uncontended in the steady state.
//
// So the usual shape is one goroutine sending batches and one reading
// replies, per connection.
//
// # Closing
//
// CloseWithCode(code, text) sends a close frame (best effort, bounded by a
// one-second write deadline) and closes the TCP connection without waiting
// for the server's reply: a load generator tearing down thousands of
// connections must not wait on each. Close is CloseWithCode(1000, "").
// Closing unblocks a pending ReadMessage, which then returns an error.
package wsconn

package refserver

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// closeGrace bounds each step of a close handshake the server starts: the
// last write before the close frame, the close frame itself, and the wait
// for the client's answer.
const closeGrace = time.Second

// sock is one Pusher connection. Its reader is the HTTP handler goroutine
// (gorilla reads); its writer is one goroutine that drains a bounded queue
// of pre-built frames into a single writev per wake-up. Nothing else writes
// to the socket, except gorilla itself when a read fails on protocol
// grounds (1009, 1002): that is one whole-frame Write, and the net.Conn
// write lock keeps frames whole.
type sock struct {
	srv      *Server
	ws       *websocket.Conn
	nc       net.Conn
	socketID string

	// limit is how many frames may wait; a send past it closes the socket
	// with overCode (a slow consumer). Pusher sockets: Config.SendQueue and
	// 4100; /rooms members: Config.RoomsSendQueue and 1008.
	limit      int
	overCode   int
	overReason string

	mu       sync.Mutex
	q        [][]byte // frames waiting; swapped with spare by the writer
	spare    [][]byte
	closing  bool
	closeMsg []byte // close frame to send once closing; nil: none
	wake     chan struct{}

	writerDone chan struct{}

	// Owned by the reader goroutine.
	channels map[string]struct{}
}

func newSock(srv *Server, ws *websocket.Conn, socketID string) *sock {
	return &sock{
		srv:        srv,
		ws:         ws,
		nc:         ws.NetConn(),
		socketID:   socketID,
		limit:      srv.cfg.SendQueue,
		overCode:   closeOverCapacity,
		overReason: "over capacity",
		wake:       make(chan struct{}, 1),
		writerDone: make(chan struct{}),
		channels:   make(map[string]struct{}),
	}
}

func (s *sock) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// send queues a frame; see sendAll.
func (s *sock) send(frame []byte) bool {
	one := [1][]byte{frame}
	return s.sendAll(one[:])
}

// sendAll queues frames, in order, all or none. A queue that would go past
// its limit means the client reads slower than it is sent to: the socket is
// closed with overCode rather than letting memory grow or blocking the
// publisher. It reports whether the frames were queued.
func (s *sock) sendAll(frames [][]byte) bool {
	return s.queue(frames, nil)
}

// sendEvents is sendAll for event frames: each one queued is counted in
// Stats.Deliveries while the queue is still locked, so the counter has it
// before the writer can send it (a client that has read an event never
// sees a count without it).
func (s *sock) sendEvents(frames [][]byte) bool {
	return s.queue(frames, &s.srv.stats.deliveries)
}

func (s *sock) queue(frames [][]byte, counted *atomic.Uint64) bool {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		s.srv.stats.dropped.Add(uint64(len(frames)))
		return false
	}
	if len(s.q)+len(frames) > s.limit {
		s.mu.Unlock()
		s.srv.stats.slowConsumerCloses.Add(1)
		s.srv.stats.dropped.Add(uint64(len(frames)))
		// The write in flight keeps its WriteTimeout: a client that catches
		// up by then still gets the close frame after it.
		s.finishWithin(closeFrame(s.overCode, s.overReason), true, 0)
		return false
	}
	s.q = append(s.q, frames...)
	if counted != nil {
		counted.Add(uint64(len(frames)))
	}
	s.mu.Unlock()
	s.signal()
	return true
}

// finish starts closing: frame (nil: none, the peer is gone or gorilla
// already sent one) is written after what is queued, or instead of it when
// drop is set. Safe from any goroutine, any number of times; the first call
// wins.
func (s *sock) finish(frame []byte, drop bool) { s.finishWithin(frame, drop, closeGrace) }

// finishWithin is finish where a write in flight gets grace to complete
// (0: its own WriteTimeout) before the close frame.
func (s *sock) finishWithin(frame []byte, drop bool, grace time.Duration) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	s.closing = true
	s.closeMsg = frame
	dropped := 0
	if drop {
		dropped = len(s.q)
		clear(s.q)
		s.q = s.q[:0]
	}
	s.mu.Unlock()
	if dropped > 0 {
		s.srv.stats.dropped.Add(uint64(dropped))
	}
	if drop && grace > 0 {
		// A writer stuck on a client that stopped reading gets grace to
		// finish, then fails and the connection is cut.
		s.nc.SetWriteDeadline(time.Now().Add(grace))
	}
	s.signal()
}

// closeWith sends a close frame with code and reason, dropping anything
// still queued (Shutdown, slow consumer).
func (s *sock) closeWith(code int, reason string) { s.finish(closeFrame(code, reason), true) }

func (s *sock) netConn() net.Conn { return s.nc }

// handleControl routes the pong to a ping and the answer to a close
// through the queue: gorilla's default handlers would write from the
// reader goroutine, racing the writer.
func (s *sock) handleControl() {
	s.ws.SetPingHandler(func(p string) error {
		s.send(controlFrame(opPong, p))
		return nil
	})
	s.ws.SetCloseHandler(func(code int, text string) error {
		if code == websocket.CloseNoStatusReceived {
			s.finish(closeFrame(0, ""), true)
		} else {
			s.finish(closeFrame(code, ""), true)
		}
		return nil
	})
}

// writeLoop is the socket's only writer of queued frames.
func (s *sock) writeLoop() {
	defer close(s.writerDone)
	for range s.wake {
		s.mu.Lock()
		batch := s.q
		s.q, s.spare = s.spare[:0], nil
		closing, msg := s.closing, s.closeMsg
		if len(batch) > 0 {
			// Under the lock, so a finish that follows shortens it and
			// is not overridden.
			d := s.srv.cfg.WriteTimeout
			if closing {
				d = closeGrace
			}
			s.nc.SetWriteDeadline(time.Now().Add(d))
		}
		s.mu.Unlock()

		if len(batch) > 0 {
			// WriteTo consumes (nils) the elements of batch; it is reused anyway.
			n := len(batch)
			spin(time.Duration(n) * s.srv.cfg.Spin)
			garbage(int64(n) * s.srv.cfg.Garbage)
			bufs := net.Buffers(batch)
			if _, err := bufs.WriteTo(s.nc); err != nil {
				s.mu.Lock()
				already := s.closing
				s.mu.Unlock()
				var ne net.Error
				if !already && errors.As(err, &ne) && ne.Timeout() {
					// Blocked past WriteTimeout: a slow consumer too.
					s.srv.stats.slowConsumerCloses.Add(1)
				}
				// A frame may be half written: no close frame can follow.
				s.finish(nil, true)
				s.nc.SetReadDeadline(time.Now()) // wake the reader
				return
			}
			s.srv.stats.messagesOut.Add(uint64(n))
		}
		s.giveBack(batch)
		if closing {
			if msg != nil {
				s.nc.SetWriteDeadline(time.Now().Add(closeGrace))
				s.nc.Write(msg)
			}
			// The reader now waits for the client's close; not forever.
			s.nc.SetReadDeadline(time.Now().Add(closeGrace))
			return
		}
	}
}

// giveBack returns the drained slice for reuse, so steady state allocates
// nothing per message.
func (s *sock) giveBack(batch [][]byte) {
	clear(batch)
	s.mu.Lock()
	if s.spare == nil {
		s.spare = batch[:0]
	}
	s.mu.Unlock()
}

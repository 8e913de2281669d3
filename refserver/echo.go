package refserver

import (
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// echoConn is an /echo socket. One goroutine reads a message and writes it
// back; gorilla owns every write, and WriteControl (used by Shutdown) is
// safe alongside it.
type echoConn struct {
	ws      *websocket.Conn
	closing atomic.Bool
}

func (e *echoConn) closeWith(code int, reason string) {
	if !e.closing.CompareAndSwap(false, true) {
		return
	}
	e.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(closeGrace))
	e.ws.NetConn().SetReadDeadline(time.Now().Add(closeGrace))
}

func (e *echoConn) netConn() net.Conn { return e.ws.NetConn() }

// serveEcho sends every message back with the same opcode. It streams each
// message from gorilla's reader into its writer (messageWriter.ReadFrom
// copies straight into the socket's write buffer), so no per-message
// buffer; gorilla's reader and writer objects are its only allocations.
func (s *Server) serveEcho(w http.ResponseWriter, r *http.Request) {
	ws, err := s.echoUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return // gorilla has answered with an HTTP error
	}
	ws.SetReadLimit(s.cfg.MaxMessageBytes)
	c := &echoConn{ws: ws}
	if !s.track(c) {
		c.closeWith(closeServiceReboot, "server shutting down")
		ws.Close()
		return
	}
	defer s.untrack(c)

	for {
		mt, rd, err := ws.NextReader()
		if err != nil {
			s.endSocket(ws.NetConn(), err)
			return
		}
		s.stats.messagesIn.Add(1)
		spin(s.cfg.Spin)
		garbage(s.cfg.Garbage)
		wr, err := ws.NextWriter(mt)
		if err != nil {
			s.endSocket(ws.NetConn(), err)
			return
		}
		src := rd
		if mt == websocket.TextMessage {
			src = &utf8Reader{r: rd}
		}
		if _, err := io.Copy(wr, src); err != nil {
			if errors.Is(err, errInvalidUTF8) {
				// Not wr.Close: that would end the message with what
				// was copied so far. Part of a long message may have
				// gone out already as fragments; the close frame ends it.
				s.stats.invalidUTF8Closes.Add(1)
				c.closeWith(closeInvalidPayload, "invalid UTF-8 in a text message")
				drainUntilClose(ws)
				ws.NetConn().Close()
				return
			}
			wr.Close()
			s.endSocket(ws.NetConn(), err)
			return
		}
		if err := wr.Close(); err != nil {
			s.endSocket(ws.NetConn(), err)
			return
		}
		s.stats.messagesOut.Add(1)
	}
}

// drainUntilClose reads, discarding, until the client answers our close
// frame or the read deadline closeWith set passes.
func drainUntilClose(ws *websocket.Conn) {
	for {
		if _, _, err := ws.NextReader(); err != nil {
			return
		}
	}
}

// endSocket closes nc after a read loop ended with err. After an oversized
// message gorilla has sent 1009 but the payload is still unread; closing
// now would reset the connection and could destroy the close frame in
// flight, so drain until the client hangs up (at most closeGrace).
func (s *Server) endSocket(nc net.Conn, err error) {
	if err == websocket.ErrReadLimit {
		s.stats.oversizeCloses.Add(1)
		nc.SetReadDeadline(time.Now().Add(closeGrace))
		io.Copy(io.Discard, nc)
	}
	nc.Close()
}

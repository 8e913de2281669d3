package refserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ceiling-bench/ceiling/pusher"
	"github.com/gorilla/websocket"
)

// serveApp is the Pusher WebSocket endpoint /app/{key}?protocol=7.
func (s *Server) serveApp(w http.ResponseWriter, r *http.Request) {
	ws, err := s.appUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(s.cfg.MaxMessageBytes)
	sk := newSock(s, ws, s.newSocketID())
	if !s.track(sk) {
		ws.NetConn().Write(closeFrame(closeServiceReboot, "server shutting down"))
		ws.Close()
		return
	}
	defer s.untrack(sk)
	go sk.writeLoop()

	sk.handleControl()

	if code, msg := s.admit(r); code != 0 {
		// The error, then a close with the same code, as Pusher does.
		sk.send(sealFrame(pusher.AppendError(frameBuf(64+len(msg)), code, msg), opText))
		sk.finish(closeFrame(code, msg), false)
	} else {
		sk.send(sealFrame(pusher.AppendConnectionEstablished(frameBuf(96), sk.socketID,
			int(s.cfg.ActivityTimeout.Seconds())), opText))
	}

	err = sk.readLoop()
	sk.finish(nil, true) // no-op unless the client vanished
	<-sk.writerDone
	for name := range sk.channels {
		s.hub.unsubscribe(name, sk)
	}
	s.endSocket(sk.nc, err)
}

// admit checks the app key and protocol version; a non-zero code refuses
// the connection.
func (s *Server) admit(r *http.Request) (int, string) {
	if key := r.PathValue("key"); key != s.cfg.Key {
		return pusher.CodeAppNotFound, fmt.Sprintf("App key %s not in this cluster. Did you forget to specify the cluster?", key)
	}
	p := r.URL.Query().Get("protocol")
	if p == "" {
		return pusher.CodeNoProtocolVersion, "No protocol version supplied"
	}
	v, err := strconv.Atoi(p)
	if err != nil {
		return pusher.CodeInvalidVersionFormat, "Invalid version string format"
	}
	if v != pusher.ProtocolVersion {
		return pusher.CodeUnsupportedProtocol, fmt.Sprintf("Unsupported protocol version %d (this server speaks %d)", v, pusher.ProtocolVersion)
	}
	return 0, ""
}

// readLoop handles client messages until the socket fails or closes.
// Client messages are rare in a fan-out run (subscribe, ping), so plain
// ReadMessage and encoding/json are fine here.
func (sk *sock) readLoop() error {
	for {
		mt, data, err := sk.ws.ReadMessage()
		if err != nil {
			return err
		}
		sk.srv.stats.messagesIn.Add(1)
		sk.mu.Lock()
		closing := sk.closing
		sk.mu.Unlock()
		if closing {
			continue // waiting for the client's close
		}
		if mt == websocket.TextMessage && !utf8.Valid(data) {
			// RFC 6455 8.1: fail the connection with 1007. Reading goes
			// on until the client answers the close (or closeGrace).
			sk.srv.stats.invalidUTF8Closes.Add(1)
			sk.finish(closeFrame(closeInvalidPayload, "invalid UTF-8 in a text message"), true)
			continue
		}
		sk.handle(data)
	}
}

// handle answers one client message. Bad input gets pusher:error with a
// null code and the socket stays open.
func (sk *sock) handle(data []byte) {
	var m pusher.Message
	if err := json.Unmarshal(data, &m); err != nil {
		sk.sendError(fmt.Sprintf("Invalid JSON: %v", err))
		return
	}
	switch m.Event {
	case pusher.EventPing:
		sk.send(sk.srv.pong)
	case pusher.EventPong:
	case pusher.EventSubscribe, pusher.EventUnsubscribe:
		var d pusher.SubscribeData
		if err := decodeData(m.Data, &d); err != nil {
			sk.sendError(fmt.Sprintf("%s: invalid data: %v", m.Event, err))
			return
		}
		if err := checkChannel(d.Channel); err != nil {
			sk.sendError(fmt.Sprintf("%s: %v", m.Event, err))
			return
		}
		if m.Event == pusher.EventUnsubscribe {
			if _, ok := sk.channels[d.Channel]; ok {
				sk.srv.hub.unsubscribe(d.Channel, sk)
				delete(sk.channels, d.Channel)
			}
			return
		}
		if strings.HasPrefix(d.Channel, "private-") || strings.HasPrefix(d.Channel, "presence-") {
			sk.sendError(fmt.Sprintf("%s: %q: private and presence channels are not supported", m.Event, d.Channel))
			return
		}
		if _, ok := sk.channels[d.Channel]; !ok && len(sk.channels) >= sk.srv.cfg.MaxSubscriptions {
			msg := fmt.Sprintf("%s: %q: this connection is subscribed to %d channels, the limit (--max-subscriptions); unsubscribe first",
				m.Event, d.Channel, len(sk.channels))
			sk.send(sealFrame(pusher.AppendError(frameBuf(64+len(msg)), pusher.CodeSubscriptionLimit, msg), opText))
			return
		}
		sk.srv.hub.subscribe(d.Channel, sk)
		sk.channels[d.Channel] = struct{}{}
		sk.send(sealFrame(pusher.AppendSubscriptionSucceeded(frameBuf(64+len(d.Channel)), d.Channel), opText))
	case "":
		sk.sendError(`Missing "event" field`)
	default:
		sk.sendError(fmt.Sprintf("Unsupported event %q", m.Event))
	}
}

func (sk *sock) sendError(msg string) {
	sk.send(sealFrame(pusher.AppendError(frameBuf(64+len(msg)), 0, msg), opText))
}

// decodeData accepts data as an object or, as some clients send it, a JSON
// string holding the object.
func decodeData(raw json.RawMessage, v any) error {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		raw = json.RawMessage(s)
	}
	if len(raw) == 0 {
		return fmt.Errorf("missing")
	}
	return json.Unmarshal(raw, v)
}

// checkChannel applies Pusher's channel name rules: 1-164 characters from
// A-Z a-z 0-9 _ - = @ , . ;
func checkChannel(name string) error {
	if name == "" {
		return fmt.Errorf("channel name missing")
	}
	if len(name) > 164 {
		return fmt.Errorf("channel name longer than 164 characters")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("_-=@,.;", c) >= 0
		if !ok {
			return fmt.Errorf("channel name %q has a character outside A-Z a-z 0-9 _-=@,.;", name)
		}
	}
	return nil
}

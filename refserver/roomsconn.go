package refserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
)

// closePolicyViolation (1008) closes a /rooms member whose send queue is
// full: a slow consumer.
const closePolicyViolation = websocket.ClosePolicyViolation

// maxRoomName bounds a room name and a member id, in bytes.
const maxRoomName = 164

// Error reasons of the /rooms protocol.
const (
	reasonBadJSON       = "bad_json"
	reasonNotJoined     = "not_joined"
	reasonUnknownType   = "unknown_type"
	reasonAlreadyJoined = "already_joined"
	reasonViewer        = "viewer"
	reasonRateLimited   = "rate_limited"
)

// roomConn is one /rooms connection: a sock (bounded queue, one writer)
// and its reader's state.
type roomConn struct {
	srv    *Server
	sk     *sock
	m      *member // nil until joined
	bucket tokenBucket
}

// serveRooms is the rooms endpoint /rooms (docs/rooms.md).
func (s *Server) serveRooms(w http.ResponseWriter, r *http.Request) {
	ws, err := s.appUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(s.cfg.MaxMessageBytes)
	sk := newSock(s, ws, "")
	sk.limit, sk.overCode, sk.overReason = s.cfg.RoomsSendQueue, closePolicyViolation, "slow consumer"
	if !s.track(sk) {
		ws.NetConn().Write(closeFrame(closeServiceReboot, "server shutting down"))
		ws.Close()
		return
	}
	defer s.untrack(sk)
	go sk.writeLoop()
	sk.handleControl()

	c := &roomConn{srv: s, sk: sk, bucket: newTokenBucket(s.cfg.RoomsRateLimit, s.now())}
	err = c.readLoop()
	if c.m != nil {
		s.rooms.leave(c.m) // first, so the room stops queueing to it
	}
	sk.finish(nil, true) // no-op unless the client vanished
	<-sk.writerDone
	s.endSocket(sk.nc, err)
}

func (c *roomConn) readLoop() error {
	for {
		mt, data, err := c.sk.ws.ReadMessage()
		if err != nil {
			return err
		}
		c.srv.stats.messagesIn.Add(1)
		c.sk.mu.Lock()
		closing := c.sk.closing
		c.sk.mu.Unlock()
		if closing {
			continue // waiting for the client's close
		}
		if mt != websocket.TextMessage {
			c.fail(400, reasonBadJSON, nil, "a binary message; the protocol is JSON text")
			continue
		}
		if !utf8.Valid(data) {
			c.srv.stats.invalidUTF8Closes.Add(1)
			c.sk.finish(closeFrame(closeInvalidPayload, "invalid UTF-8 in a text message"), true)
			continue
		}
		c.handle(data)
	}
}

// roomIn is every client message; which fields count depends on type.
type roomIn struct {
	Type   string          `json:"type"`
	Room   string          `json:"room"`
	Role   string          `json:"role"`
	ID     json.RawMessage `json:"id"` // join: the member id; patch: the patch id, copied into ack
	Since  *int64          `json:"since"`
	TS     *int64          `json:"ts"`
	Data   json.RawMessage `json:"data"`
	Cursor json.RawMessage `json:"cursor"`
}

func (c *roomConn) handle(data []byte) {
	var in roomIn
	if err := json.Unmarshal(data, &in); err != nil {
		c.fail(400, reasonBadJSON, nil, fmt.Sprintf("invalid JSON: %v", err))
		return
	}
	// A patch id, if it is a JSON string, so errors can carry it.
	var pid []byte
	if in.Type == "patch" && len(in.ID) > 0 && in.ID[0] == '"' {
		pid = in.ID
	}
	if in.Type != "presence" && !c.bucket.allow(c.srv.now()) {
		c.srv.stats.rateLimited.Add(1)
		c.fail(429, reasonRateLimited, pid, "")
		return
	}
	if in.Type == "join" {
		c.join(&in)
		return
	}
	if c.m == nil {
		c.fail(400, reasonNotJoined, pid, `send {"type":"join",...} first`)
		return
	}
	switch in.Type {
	case "patch":
		if !c.m.editor {
			c.fail(403, reasonViewer, pid, "")
			return
		}
		if pid == nil {
			c.fail(400, reasonBadJSON, nil, `patch: "id" must be a string`)
			return
		}
		if in.TS == nil {
			c.fail(400, reasonBadJSON, pid, `patch: "ts" (an integer) missing`)
			return
		}
		d := in.Data
		if len(d) == 0 {
			d = json.RawMessage("null")
		}
		c.m.room.patch(c.m, pid, *in.TS, d)
		c.srv.stats.roomOps.Add(1)
	case "presence":
		if in.TS == nil {
			c.fail(400, reasonBadJSON, nil, `presence: "ts" (an integer) missing`)
			return
		}
		cur := in.Cursor
		if len(cur) == 0 {
			cur = json.RawMessage("null")
		}
		c.m.room.presence(c.m, *in.TS, appendPresenceEntry(make([]byte, 0, 48+len(c.m.idJSON)+len(cur)), c.m.idJSON, *in.TS, cur))
	default:
		c.fail(400, reasonUnknownType, pid, fmt.Sprintf("type %q", in.Type))
	}
}

func (c *roomConn) join(in *roomIn) {
	if c.m != nil {
		c.fail(400, reasonAlreadyJoined, nil, fmt.Sprintf("already in room %q; one room per connection", c.m.room.name))
		return
	}
	var id string
	if len(in.ID) == 0 || in.ID[0] != '"' || json.Unmarshal(in.ID, &id) != nil {
		c.fail(400, reasonBadJSON, nil, `join: "id" must be a string`)
		return
	}
	var editor bool
	switch in.Role {
	case "editor":
		editor = true
	case "viewer":
	default:
		c.fail(400, reasonBadJSON, nil, fmt.Sprintf(`join: "role" %q, want "editor" or "viewer"`, in.Role))
		return
	}
	switch {
	case in.Room == "" || len(in.Room) > maxRoomName:
		c.fail(400, reasonBadJSON, nil, fmt.Sprintf(`join: "room" must be 1 to %d bytes`, maxRoomName))
		return
	case id == "" || len(id) > maxRoomName:
		c.fail(400, reasonBadJSON, nil, fmt.Sprintf(`join: "id" must be 1 to %d bytes`, maxRoomName))
		return
	case in.Since != nil && *in.Since < 0:
		c.fail(400, reasonBadJSON, nil, `join: "since" is negative`)
		return
	}
	m := &member{sk: c.sk, id: id, idJSON: appendJSONString(nil, id)}
	c.srv.rooms.join(in.Room, m, editor, in.Since)
	c.m = m
}

// fail sends an error message; the connection stays open.
func (c *roomConn) fail(code int, reason string, id []byte, detail string) {
	c.sk.send(sealFrame(appendRoomError(frameBuf(64+len(id)+len(detail)), code, reason, id, detail), opText))
}

// tokenBucket allows rate messages a second with a burst of rate. Only
// the connection's reader uses it.
type tokenBucket struct {
	rate   float64
	tokens float64
	last   time.Time
}

func newTokenBucket(rate int, now time.Time) tokenBucket {
	return tokenBucket{rate: float64(rate), tokens: float64(rate), last: now}
}

func (b *tokenBucket) allow(now time.Time) bool {
	if dt := now.Sub(b.last); dt > 0 {
		b.tokens = min(b.rate, b.tokens+dt.Seconds()*b.rate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

package refserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
)

// roomMsg is any /rooms server message.
type roomMsg struct {
	Type    string          `json:"type"`
	Room    string          `json:"room"`
	Role    string          `json:"role"`
	Version uint64          `json:"version"`
	Members int             `json:"members"`
	Reason  string          `json:"reason"`
	From    string          `json:"from"`
	V       uint64          `json:"v"`
	TS      int64           `json:"ts"`
	Data    json.RawMessage `json:"data"`
	ID      *string         `json:"id"`
	Code    int             `json:"code"`
	N       int             `json:"n"`
	Users   []presenceUser  `json:"users"`
}

type presenceUser struct {
	ID     string          `json:"id"`
	TS     int64           `json:"ts"`
	Cursor json.RawMessage `json:"cursor"`
}

func (m roomMsg) id() string {
	if m.ID == nil {
		return "<none>"
	}
	return *m.ID
}

// readRoom reads one message, failing after 5 s.
func readRoom(t *testing.T, c *websocket.Conn) roomMsg {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	mt, data, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if mt != websocket.TextMessage {
		t.Fatalf("message type %d, want text", mt)
	}
	var m roomMsg
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("message %s is not JSON: %v", data, err)
	}
	if m.Type == "" {
		t.Fatalf("message %s has no type", data)
	}
	return m
}

func sendText(t *testing.T, c *websocket.Conn, format string, args ...any) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, format, args...)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// join dials /rooms and joins; since < 0 leaves "since" out. It returns
// the joined message.
func (ts *testServer) join(t *testing.T, room, role, id string, since int64) (*websocket.Conn, roomMsg) {
	t.Helper()
	c := ts.dial(t, "/rooms")
	if since < 0 {
		sendText(t, c, `{"type":"join","room":%q,"role":%q,"id":%q}`, room, role, id)
	} else {
		sendText(t, c, `{"type":"join","room":%q,"role":%q,"id":%q,"since":%d}`, room, role, id, since)
	}
	m := readRoom(t, c)
	if m.Type != "joined" || m.Room != room {
		t.Fatalf("%s joining %s: got %+v, want joined", id, room, m)
	}
	return c, m
}

// barrier returns every message the server queued to c before now: the
// reply to a message of unknown type comes after them, in order. (A read
// with a short deadline could not fail on a loaded machine.)
func barrier(t *testing.T, c *websocket.Conn) []roomMsg {
	t.Helper()
	sendText(t, c, `{"type":"barrier"}`)
	var got []roomMsg
	for {
		m := readRoom(t, c)
		if m.Type == "error" && m.ID == nil && (m.Reason == "unknown_type" || m.Reason == "rate_limited") {
			return got
		}
		got = append(got, m)
	}
}

func expectQuiet(t *testing.T, who string, c *websocket.Conn) {
	t.Helper()
	if got := barrier(t, c); len(got) > 0 {
		t.Errorf("%s got %d unexpected messages, first %+v", who, len(got), got[0])
	}
}

func patch(t *testing.T, c *websocket.Conn, id string, ts int64, data string) {
	t.Helper()
	sendText(t, c, `{"type":"patch","id":%q,"ts":%d,"data":%s}`, id, ts, data)
}

func sameJSON(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: %v", want, err)
	}
	return cmp.Equal(g, w)
}

// Patches from two editors reach every other member as ops and their
// sender as acks, ts and data copied; every member sees versions 1, 2, 3,
// ... in one order, and never its own op.
func TestRoomsRelayAndAck(t *testing.T) {
	ts := start(t, Config{})
	a, ja := ts.join(t, "r1", "editor", "a", -1)
	if ja.Role != "editor" || ja.Version != 0 || ja.Members != 1 || ja.Reason != "" {
		t.Errorf("first join: %+v, want editor, version 0, 1 member", ja)
	}
	b, jb := ts.join(t, "r1", "editor", "b", -1)
	if jb.Members != 2 {
		t.Errorf("second join: members %d, want 2", jb.Members)
	}
	v, jv := ts.join(t, "r1", "viewer", "v", -1)
	if jv.Role != "viewer" || jv.Members != 3 {
		t.Errorf("viewer join: %+v", jv)
	}
	// Another room sees none of it.
	other, _ := ts.join(t, "r2", "editor", "o", -1)

	const perEditor = 20
	data := func(from string, i int) string {
		return fmt.Sprintf(`{"from":%q,"i":%d,"text":"é\n\"q\"","nested":[1,{"x":null}]}`, from, i)
	}
	var wg sync.WaitGroup
	for _, e := range []struct {
		c    *websocket.Conn
		name string
		base int64
	}{{a, "a", 1_000_000}, {b, "b", 2_000_000}} {
		wg.Go(func() {
			for i := range perEditor {
				// Not t.Fatal off the test goroutine.
				msg := fmt.Sprintf(`{"type":"patch","id":"%s-%d","ts":%d,"data":%s}`, e.name, i, e.base+int64(i), data(e.name, i))
				if err := e.c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
					t.Errorf("%s: write: %v", e.name, err)
					return
				}
			}
		})
	}
	wg.Wait()

	check := func(who string, c *websocket.Conn, self string) {
		t.Helper()
		next := map[string]int{"a": 0, "b": 0}
		for want := uint64(1); want <= 2*perEditor; want++ {
			m := readRoom(t, c)
			var from string
			switch m.Type {
			case "ack":
				from = self
				if m.V != want {
					t.Fatalf("%s: ack %s has v %d, want %d", who, m.id(), m.V, want)
				}
				if wantID := fmt.Sprintf("%s-%d", self, next[self]); m.id() != wantID {
					t.Fatalf("%s: ack id %s, want %s", who, m.id(), wantID)
				}
			case "op":
				from = m.From
				if from == self {
					t.Fatalf("%s got its own op %+v", who, m)
				}
				if m.Room != "r1" || m.V != want {
					t.Fatalf("%s: op room %q v %d, want r1 v %d", who, m.Room, m.V, want)
				}
				if !sameJSON(t, m.Data, data(from, next[from])) {
					t.Fatalf("%s: op data %s, want %s", who, m.Data, data(from, next[from]))
				}
			default:
				t.Fatalf("%s: got %+v, want op or ack v %d", who, m, want)
			}
			base := map[string]int64{"a": 1_000_000, "b": 2_000_000}[from]
			if m.TS != base+int64(next[from]) {
				t.Fatalf("%s: %s from %s has ts %d, want %d", who, m.Type, from, m.TS, base+int64(next[from]))
			}
			next[from]++
		}
		expectQuiet(t, who, c)
	}
	check("a", a, "a")
	check("b", b, "b")
	check("viewer", v, "")
	expectQuiet(t, "the other room", other)

	// A late joiner is told the version reached.
	_, jl := ts.join(t, "r1", "viewer", "late", -1)
	if jl.Version != 2*perEditor {
		t.Errorf("late join version %d, want %d", jl.Version, 2*perEditor)
	}
	if st := ts.health(t); st.Rooms != 2 || st.RoomMembers != 5 {
		t.Errorf("health rooms %d members %d, want 2 and 5", st.Rooms, st.RoomMembers)
	}
}

// An op is encoded once: every member's queue and the ring hold the very
// same slice, and a presence beat shares one frame among the members that
// did not move. Checked inside the server, on sockets with no writer, so
// the queues can be inspected.
func TestRoomsFramesShared(t *testing.T) {
	srv, err := New(Config{RoomsPresenceBeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.rooms
	var ms []*member
	for i := range 4 {
		sk := &sock{srv: srv, limit: 100, wake: make(chan struct{}, 1)}
		m := &member{sk: sk, id: fmt.Sprint(i), idJSON: appendJSONString(nil, fmt.Sprint(i))}
		h.join("r", m, true, nil)
		ms = append(ms, m)
	}
	r := h.lookup("r")
	r.patch(ms[0], []byte(`"p"`), 1, []byte(`{"k":1}`))
	op := r.ring[0].frame
	for _, m := range ms[1:] {
		q := m.sk.q
		if len(q) != 2 || &q[1][0] != &op[0] {
			t.Errorf("member %s: queue of %d frames, its op not the ring's slice", m.id, len(q))
		}
	}
	if q := ms[0].sk.q; len(q) != 2 || !strings.Contains(string(q[1]), `"type":"ack"`) {
		t.Errorf("sender's queue: %q, want joined then ack", q)
	}

	r.presence(ms[0], 5, appendPresenceEntry(nil, ms[0].idJSON, 5, []byte("1")))
	r.presence(ms[1], 6, appendPresenceEntry(nil, ms[1].idJSON, 6, []byte("2")))
	r.flushPresence()
	last := func(m *member) []byte { return m.sk.q[len(m.sk.q)-1] }
	if &last(ms[2])[0] != &last(ms[3])[0] {
		t.Error("members that did not move got separately encoded presence frames")
	}
	if strings.Contains(string(last(ms[0])), `"id":"0"`) || !strings.Contains(string(last(ms[0])), `"id":"1"`) {
		t.Errorf("member 0 got %s, want member 1's presence only", last(ms[0]))
	}
	for _, m := range ms {
		h.leave(m)
	}
	if rooms, members := h.counts(); rooms != 0 || members != 0 {
		t.Errorf("after every member left: %d rooms, %d members", rooms, members)
	}
}

// An editor past --rooms-editor-cap is joined as a viewer with reason
// editor_cap, and its patches get 403 viewer and are not applied. A place
// freed by a leaving editor goes to the next editor.
func TestRoomsEditorCap(t *testing.T) {
	ts := start(t, Config{RoomsEditorCap: 1})
	a, ja := ts.join(t, "r", "editor", "a", -1)
	if ja.Role != "editor" {
		t.Fatalf("first editor joined as %q", ja.Role)
	}
	b, jb := ts.join(t, "r", "editor", "b", -1)
	if jb.Role != "viewer" || jb.Reason != "editor_cap" {
		t.Fatalf("second editor: %+v, want role viewer reason editor_cap", jb)
	}
	patch(t, b, "b-1", 5, `"x"`)
	m := readRoom(t, b)
	if m.Type != "error" || m.Code != 403 || m.Reason != "viewer" || m.id() != "b-1" {
		t.Errorf("viewer's patch: %+v, want error 403 viewer id b-1", m)
	}
	expectQuiet(t, "editor a", a)
	// Not applied: the next patch is version 1.
	patch(t, a, "a-1", 6, `"y"`)
	if m := readRoom(t, a); m.Type != "ack" || m.V != 1 {
		t.Errorf("a's patch: %+v, want ack v 1", m)
	}

	a.Close()
	waitFor(t, func() bool { return ts.Stats().RoomMembers == 1 })
	_, jc := ts.join(t, "r", "editor", "c", -1)
	if jc.Role != "editor" || jc.Reason != "" || jc.Version != 1 {
		t.Errorf("editor after a left: %+v, want editor at version 1", jc)
	}
}

// A join with since gets the ops after it from the ring, in order; once
// the ring has dropped some of them, resync with the version instead.
func TestRoomsResume(t *testing.T) {
	ts := start(t, Config{RoomsRing: 5})
	a, _ := ts.join(t, "r", "editor", "a", -1)
	send := func(from, to int) {
		t.Helper()
		for i := from; i <= to; i++ {
			patch(t, a, fmt.Sprintf("p%d", i), int64(i), fmt.Sprintf(`{"n":%d}`, i))
			if m := readRoom(t, a); m.Type != "ack" || m.V != uint64(i) {
				t.Fatalf("patch %d: %+v, want ack v %d", i, m, i)
			}
		}
	}
	versions := func(ms []roomMsg) []string {
		var s []string
		for _, m := range ms {
			switch m.Type {
			case "op":
				s = append(s, fmt.Sprintf("op v%d n=%s", m.V, m.Data))
			case "resync":
				s = append(s, fmt.Sprintf("resync %d", m.Version))
			default:
				s = append(s, m.Type)
			}
		}
		return s
	}
	resume := func(since int64, wantVersion uint64, want []string) {
		t.Helper()
		c, j := ts.join(t, "r", "viewer", fmt.Sprintf("since-%d", since), since)
		if j.Version != wantVersion {
			t.Errorf("since %d: joined at version %d, want %d", since, j.Version, wantVersion)
		}
		if diff := cmp.Diff(want, versions(barrier(t, c))); diff != "" {
			t.Errorf("since %d: after joined (-want +got):\n%s", since, diff)
		}
	}
	send(1, 3)
	resume(0, 3, []string{`op v1 n={"n":1}`, `op v2 n={"n":2}`, `op v3 n={"n":3}`})
	resume(1, 3, []string{`op v2 n={"n":2}`, `op v3 n={"n":3}`})
	resume(3, 3, nil)
	resume(4, 3, []string{"resync 3"}) // ahead of the room
	send(4, 8)                         // the ring of 5 now holds 4..8
	resume(2, 8, []string{"resync 8"})
	resume(3, 8, []string{`op v4 n={"n":4}`, `op v5 n={"n":5}`, `op v6 n={"n":6}`, `op v7 n={"n":7}`, `op v8 n={"n":8}`})
	resume(7, 8, []string{`op v8 n={"n":8}`})
}

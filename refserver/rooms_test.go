package refserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
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

// beat runs room name's presence beat now (the tests set a beat of an
// hour so only they run it).
func (ts *testServer) beat(t *testing.T, name string) {
	t.Helper()
	r := ts.rooms.lookup(name)
	if r == nil {
		t.Fatalf("no room %q", name)
	}
	r.flushPresence()
}

// Presence is coalesced: one message per member per beat holding the
// latest presence of every other member that changed, never its own;
// nothing when nobody changed.
func TestRoomsPresenceCoalesced(t *testing.T) {
	ts := start(t, Config{RoomsPresenceBeat: time.Hour})
	a, _ := ts.join(t, "r", "editor", "a", -1)
	b, _ := ts.join(t, "r", "viewer", "b", -1)
	c, _ := ts.join(t, "r", "viewer", "c", -1)

	sendText(t, a, `{"type":"presence","ts":300,"cursor":{"line":1}}`)
	sendText(t, a, `{"type":"presence","ts":310,"cursor":{"line":2}}`) // replaces the first
	sendText(t, b, `{"type":"presence","ts":200,"cursor":[7,8]}`)
	// Each sender's presence is recorded before its barrier reply.
	expectQuiet(t, "a", a)
	expectQuiet(t, "b", b)
	ts.beat(t, "r")

	type user struct {
		ID     string
		TS     int64
		Cursor string
	}
	users := func(m roomMsg) []user {
		var u []user
		for _, x := range m.Users {
			var cur any
			json.Unmarshal(x.Cursor, &cur)
			b, _ := json.Marshal(cur)
			u = append(u, user{x.ID, x.TS, string(b)})
		}
		// Users come in the order their presence was recorded; a's and
		// b's readers race.
		slices.SortFunc(u, func(x, y user) int { return strings.Compare(x.ID, y.ID) })
		return u
	}
	ua := user{"a", 310, `{"line":2}`}
	ub := user{"b", 200, `[7,8]`}
	for _, tt := range []struct {
		who    string
		c      *websocket.Conn
		wantTS int64
		want   []user
	}{
		{"a", a, 200, []user{ub}},
		{"b", b, 310, []user{ua}},
		{"c", c, 200, []user{ua, ub}},
	} {
		got := barrier(t, tt.c)
		if len(got) != 1 {
			t.Errorf("%s got %d messages after one beat, want 1: %+v", tt.who, len(got), got)
			continue
		}
		m := got[0]
		if m.Type != "presence" || m.Room != "r" || m.TS != tt.wantTS || m.N != len(tt.want) {
			t.Errorf("%s: %+v, want presence in r, ts %d, n %d", tt.who, m, tt.wantTS, len(tt.want))
		}
		if diff := cmp.Diff(tt.want, users(m)); diff != "" {
			t.Errorf("%s: users (-want +got):\n%s", tt.who, diff)
		}
	}

	// Idle: a beat with no change sends nothing.
	ts.beat(t, "r")
	for _, x := range []struct {
		who string
		c   *websocket.Conn
	}{{"a", a}, {"b", b}, {"c", c}} {
		expectQuiet(t, x.who, x.c)
	}

	// Only c changed: a and b hear of it, c hears nothing.
	sendText(t, c, `{"type":"presence","ts":400}`)
	expectQuiet(t, "c", c)
	ts.beat(t, "r")
	for _, x := range []struct {
		who string
		c   *websocket.Conn
	}{{"a", a}, {"b", b}} {
		got := barrier(t, x.c)
		if len(got) != 1 || got[0].N != 1 || len(got[0].Users) != 1 || got[0].Users[0].ID != "c" ||
			string(got[0].Users[0].Cursor) != "null" || got[0].TS != 400 {
			t.Errorf("%s after c moved: %+v, want one presence with c (cursor null, ts 400)", x.who, got)
		}
	}
	expectQuiet(t, "c", c)
}

// A beat carries at most 60 users; the rest wait for the next beat.
func TestRoomsPresenceCap(t *testing.T) {
	ts := start(t, Config{RoomsPresenceBeat: time.Hour})
	watcher, _ := ts.join(t, "r", "viewer", "w", -1)
	const movers = maxPresenceUsers + 1
	for i := range movers {
		c, _ := ts.join(t, "r", "viewer", fmt.Sprintf("m%d", i), -1)
		sendText(t, c, `{"type":"presence","ts":%d}`, i)
		// Recorded in this order: the first 60 go in the first beat.
		expectQuiet(t, "mover", c)
	}
	ts.beat(t, "r")
	got := barrier(t, watcher)
	if len(got) != 1 || got[0].N != maxPresenceUsers || len(got[0].Users) != maxPresenceUsers || got[0].TS != 0 {
		t.Fatalf("first beat: %d messages, want one of %d users with ts 0", len(got), maxPresenceUsers)
	}
	ts.beat(t, "r")
	got = barrier(t, watcher)
	if len(got) != 1 || got[0].N != 1 || got[0].Users[0].ID != fmt.Sprintf("m%d", movers-1) {
		t.Fatalf("second beat: %+v, want one message with the last mover", got)
	}
	ts.beat(t, "r")
	expectQuiet(t, "watcher", watcher)
}

// With a real beat, presence arrives by itself and an idle room sends
// nothing more.
func TestRoomsPresenceBeat(t *testing.T) {
	const beat = 20 * time.Millisecond
	ts := start(t, Config{RoomsPresenceBeat: beat})
	a, _ := ts.join(t, "r", "editor", "a", -1)
	b, _ := ts.join(t, "r", "editor", "b", -1)
	sendText(t, a, `{"type":"presence","ts":1,"cursor":"here"}`)
	m := readRoom(t, b)
	if m.Type != "presence" || m.N != 1 || m.Users[0].ID != "a" {
		t.Fatalf("b got %+v, want a's presence", m)
	}
	time.Sleep(5 * beat) // several idle beats
	expectQuiet(t, "b", b)
	expectQuiet(t, "a", a)
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

// Over --rooms-rate-limit a message gets 429 rate_limited with the patch
// id, and the patch is not applied; presence is not counted.
func TestRoomsRateLimit(t *testing.T) {
	ts := start(t, Config{RoomsRateLimit: 1})
	// The join took a's one token.
	a, _ := ts.join(t, "r", "editor", "a", -1)
	v, _ := ts.join(t, "r", "viewer", "v", -1)
	before := ts.Stats()
	const n = 6
	began := time.Now()
	for i := range n {
		patch(t, a, fmt.Sprintf("p%d", i), int64(i), `"x"`)
	}
	var acked []uint64
	limited := 0
	for range n {
		switch m := readRoom(t, a); {
		case m.Type == "ack":
			acked = append(acked, m.V)
		case m.Type == "error" && m.Code == 429 && m.Reason == "rate_limited" && strings.HasPrefix(m.id(), "p"):
			limited++
		default:
			t.Fatalf("a got %+v, want ack or error 429 with the patch id", m)
		}
	}
	elapsed := time.Since(began)
	// One token a second: at most one ack per second that passed.
	if most := int(elapsed.Seconds()) + 1; len(acked) > most {
		t.Errorf("%d of %d patches acked within %s at 1/s", len(acked), n, elapsed)
	}
	if limited == 0 {
		t.Errorf("no patch limited (took %s)", elapsed)
	}
	// Only the acked patches were applied and relayed.
	var ops []uint64
	for _, m := range barrier(t, v) {
		if m.Type == "op" {
			ops = append(ops, m.V)
		}
	}
	if diff := cmp.Diff(acked, ops); diff != "" {
		t.Errorf("ops relayed vs patches acked (-acked +ops):\n%s", diff)
	}
	// Presence is not counted: with a's bucket empty it still reaches v,
	// and a gets no 429 for it.
	sendText(t, a, `{"type":"presence","ts":1}`)
	if m := readRoom(t, v); m.Type != "presence" || m.Users[0].ID != "a" {
		t.Errorf("viewer: %+v, want a's presence", m)
	}
	for _, m := range barrier(t, a) {
		t.Errorf("a got %+v after its presence", m)
	}
	if _, j := ts.join(t, "r", "viewer", "late", -1); j.Version != uint64(len(acked)) {
		t.Errorf("room version %d after %d acks", j.Version, len(acked))
	}
	if got := ts.stats.rateLimited.Load(); got < uint64(limited) {
		t.Errorf("rate-limited counter %d, want at least %d", got, limited)
	}
	if got := ts.Stats().MessagesIn - before.MessagesIn; got < n {
		t.Errorf("messages_in moved by %d, want at least %d", got, n)
	}
}

// --rooms-skip-every 3: every third accepted patch bumps the version by
// 2, and every member sees the same gap.
func TestRoomsSkipEvery(t *testing.T) {
	ts := start(t, Config{RoomsSkipEvery: 3})
	a, _ := ts.join(t, "r", "editor", "a", -1)
	v, _ := ts.join(t, "r", "viewer", "v", -1)
	var acks, ops []uint64
	for i := range 7 {
		patch(t, a, fmt.Sprintf("p%d", i), int64(i), "null")
		acks = append(acks, readRoom(t, a).V)
		ops = append(ops, readRoom(t, v).V)
	}
	want := []uint64{1, 2, 4, 5, 6, 8, 9}
	if diff := cmp.Diff(want, acks); diff != "" {
		t.Errorf("ack versions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, ops); diff != "" {
		t.Errorf("op versions (-want +got):\n%s", diff)
	}
}

// Bad input gets an error message and the connection stays open.
func TestRoomsErrors(t *testing.T) {
	ts := start(t, Config{})
	c := ts.dial(t, "/rooms")
	for _, tt := range []struct {
		send       string
		code       int
		reason, id string
	}{
		{`{"type":"patch","id":"x1","ts":1,"data":1}`, 400, "not_joined", "x1"},
		{`{"type":"presence","ts":1}`, 400, "not_joined", "<none>"},
		{`{"type":"nonsense"}`, 400, "not_joined", "<none>"},
		{`{"type":`, 400, "bad_json", "<none>"},
		{`{"type":"join","room":"r","role":"owner","id":"c"}`, 400, "bad_json", "<none>"},
		{`{"type":"join","room":"","role":"editor","id":"c"}`, 400, "bad_json", "<none>"},
		{`{"type":"join","room":"r","role":"editor"}`, 400, "bad_json", "<none>"},
		{`{"type":"join","room":"r","role":"editor","id":"c","since":-1}`, 400, "bad_json", "<none>"},
		{`{"type":"join","room":"r","role":"editor","id":"c","since":1.5}`, 400, "bad_json", "<none>"},
	} {
		sendText(t, c, "%s", tt.send)
		m := readRoom(t, c)
		if m.Type != "error" || m.Code != tt.code || m.Reason != tt.reason || m.id() != tt.id {
			t.Errorf("%s: got %+v, want error %d %s id %s", tt.send, m, tt.code, tt.reason, tt.id)
		}
	}
	if err := c.WriteMessage(websocket.BinaryMessage, []byte(`{"type":"join"}`)); err != nil {
		t.Fatal(err)
	}
	if m := readRoom(t, c); m.Type != "error" || m.Reason != "bad_json" {
		t.Errorf("binary message: %+v, want bad_json", m)
	}
	sendText(t, c, `{"type":"join","room":"r","role":"editor","id":"c"}`)
	if m := readRoom(t, c); m.Type != "joined" {
		t.Fatalf("join after errors: %+v", m)
	}
	for _, tt := range []struct {
		send       string
		code       int
		reason, id string
	}{
		{`{"type":"join","room":"r2","role":"editor","id":"c"}`, 400, "already_joined", "<none>"},
		{`{"type":"unsubscribe"}`, 400, "unknown_type", "<none>"},
		{`{"type":"patch","id":"p1","data":1}`, 400, "bad_json", "p1"},
		{`{"type":"patch","id":7,"ts":1}`, 400, "bad_json", "<none>"},
		{`{"type":"patch","id":"p2","ts":"soon"}`, 400, "bad_json", "<none>"},
		{`{"type":"presence"}`, 400, "bad_json", "<none>"},
	} {
		sendText(t, c, "%s", tt.send)
		m := readRoom(t, c)
		if m.Type != "error" || m.Code != tt.code || m.Reason != tt.reason || m.id() != tt.id {
			t.Errorf("%s: got %+v, want error %d %s id %s", tt.send, m, tt.code, tt.reason, tt.id)
		}
	}
	// Still open and in the room.
	patch(t, c, "ok", 1, "{}")
	if m := readRoom(t, c); m.Type != "ack" || m.V != 1 {
		t.Errorf("patch after errors: %+v, want ack v 1", m)
	}
}

// A member that stops reading is closed with 1008 once its queue is full;
// the editor and the other members are never held up by it.
func TestRoomsSlowConsumer1008(t *testing.T) {
	ts := start(t, Config{RoomsSendQueue: 16, RoomsRing: 8, RoomsRateLimit: 1_000_000, WriteTimeout: 10 * time.Second})
	d := websocket.Dialer{NetDial: func(network, addr string) (net.Conn, error) {
		c, err := net.Dial(network, addr)
		if err == nil {
			c.(*net.TCPConn).SetReadBuffer(64 << 10)
		}
		return c, err
	}}
	slow, resp, err := d.Dial("ws://"+ts.addr+"/rooms", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	t.Cleanup(func() { slow.Close() })
	sendText(t, slow, `{"type":"join","room":"r","role":"viewer","id":"slow"}`)
	if m := readRoom(t, slow); m.Type != "joined" {
		t.Fatalf("slow join: %+v", m)
	}
	a, _ := ts.join(t, "r", "editor", "a", -1)
	fast, _ := ts.join(t, "r", "viewer", "fast", -1)

	body := `"` + strings.Repeat("a", 64<<10) + `"`
	deadline := time.Now().Add(30 * time.Second)
	sent := 0
	for ts.Stats().SlowConsumerCloses == 0 {
		if time.Now().After(deadline) || sent >= 2000 {
			t.Fatalf("slow member never closed after %d patches of 64 KiB", sent)
		}
		// One at a time: the editor and the fast viewer keep up.
		patch(t, a, fmt.Sprintf("p%d", sent), int64(sent), body)
		sent++
		if m := readRoom(t, a); m.Type != "ack" || m.V != uint64(sent) {
			t.Fatalf("editor: %+v, want ack v %d", m, sent)
		}
		if m := readRoom(t, fast); m.Type != "op" || m.V != uint64(sent) {
			t.Fatalf("fast viewer: %+v, want op v %d", m, sent)
		}
	}
	if got := closeCode(t, slow); got != websocket.ClosePolicyViolation {
		t.Errorf("slow member close code %d, want 1008", got)
	}
	// The room goes on for the others.
	patch(t, a, "after", 1, "0")
	if m := readRoom(t, a); m.Type != "ack" {
		t.Errorf("editor after the close: %+v", m)
	}
	if m := readRoom(t, fast); m.Type != "op" {
		t.Errorf("fast viewer after the close: %+v", m)
	}
	waitFor(t, func() bool { return ts.Stats().RoomMembers == 2 })
}

// 200 clients that vanish without a close frame (half with a reset) leave
// no room or member behind, and the server goes on serving /health and
// new clients.
func TestRoomsAbruptDrops(t *testing.T) {
	ts := start(t, Config{RoomsPresenceBeat: 10 * time.Millisecond})
	keeper, _ := ts.join(t, "keep", "editor", "k", -1)
	const clients = 200
	conns := make([]*websocket.Conn, 0, clients)
	for i := range clients {
		c := ts.dial(t, "/rooms")
		sendText(t, c, `{"type":"join","room":"d%d","role":"editor","id":"c%d"}`, i%10, i)
		sendText(t, c, `{"type":"presence","ts":%d,"cursor":%d}`, i, i)
		sendText(t, c, `{"type":"patch","id":"p","ts":%d,"data":%d}`, i, i)
		conns = append(conns, c)
	}
	waitFor(t, func() bool { return ts.Stats().RoomMembers == clients+1 })
	for i, c := range conns {
		nc := c.NetConn().(*net.TCPConn)
		if i%2 == 0 {
			nc.SetLinger(0) // RST instead of FIN
		}
		nc.Close()
	}
	// The server still answers while it cleans up (bounded: a hung
	// server fails here instead of hanging the test).
	hc := http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get("http://" + ts.addr + "/health")
	if err != nil {
		t.Fatalf("/health while 200 clients drop: %v", err)
	}
	var st Stats
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || st.Goroutines == 0 {
		t.Errorf("/health while 200 clients drop: %v %+v", err, st)
	}
	waitFor(t, func() bool {
		st := ts.Stats()
		return st.Rooms == 1 && st.RoomMembers == 1 && st.Connections == 1
	})
	// The survivor's room is unaffected, and a newcomer starts a fresh room.
	patch(t, keeper, "k1", 1, "1")
	if m := readRoom(t, keeper); m.Type != "ack" || m.V != 1 {
		t.Errorf("keeper: %+v, want ack v 1", m)
	}
	n, j := ts.join(t, "d3", "editor", "new", -1)
	if j.Version != 0 || j.Members != 1 {
		t.Errorf("new client in a dropped room's name: %+v, want version 0 and 1 member", j)
	}
	patch(t, n, "n1", 1, "1")
	if m := readRoom(t, n); m.Type != "ack" || m.V != 1 {
		t.Errorf("new client: %+v, want ack v 1", m)
	}
}

// Shutdown closes /rooms members with 1012 and drops their rooms.
func TestRoomsShutdown(t *testing.T) {
	srv, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	ts := &testServer{Server: srv, addr: l.Addr().String()}
	c, _ := ts.join(t, "r", "editor", "a", -1)
	got := make(chan int, 1)
	go func() {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for {
			_, _, err := c.ReadMessage()
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				got <- ce.Code
				return
			}
			if err != nil {
				got <- 0
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve: %v, want ErrServerClosed", err)
	}
	if code := <-got; code != websocket.CloseServiceRestart {
		t.Errorf("close code %d, want 1012", code)
	}
	if st := ts.Stats(); st.Rooms != 0 || st.RoomMembers != 0 {
		t.Errorf("after Shutdown: %d rooms, %d members", st.Rooms, st.RoomMembers)
	}
}

// A text frame that is not UTF-8 closes a /rooms socket with 1007, a
// message over --max-message-bytes with 1009; the room keeps going.
func TestRoomsBadFramesClose(t *testing.T) {
	ts := start(t, Config{MaxMessageBytes: 1024})
	a, _ := ts.join(t, "r", "editor", "a", -1)
	u, _ := ts.join(t, "r", "viewer", "u", -1)
	if err := u.WriteMessage(websocket.TextMessage, []byte("{\"type\":\"presence\",\"ts\":1,\"cursor\":\"\xff\"}")); err != nil {
		t.Fatal(err)
	}
	if got := closeCode(t, u); got != websocket.CloseInvalidFramePayloadData {
		t.Errorf("invalid UTF-8: close %d, want 1007", got)
	}
	big, _ := ts.join(t, "r", "viewer", "big", -1)
	if err := big.WriteMessage(websocket.TextMessage, []byte(`{"type":"presence","ts":1,"cursor":"`+strings.Repeat("x", 2048)+`"}`)); err != nil {
		t.Fatal(err)
	}
	if got := closeCode(t, big); got != websocket.CloseMessageTooBig {
		t.Errorf("oversized: close %d, want 1009", got)
	}
	waitFor(t, func() bool { return ts.Stats().RoomMembers == 1 })
	patch(t, a, "p", 1, "1")
	if m := readRoom(t, a); m.Type != "ack" || m.V != 1 {
		t.Errorf("editor after the closes: %+v", m)
	}
}

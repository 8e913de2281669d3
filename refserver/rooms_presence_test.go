package refserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
)

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

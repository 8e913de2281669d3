package refserver

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// maxPresenceUsers is the most users one presence message carries; the
// rest stay pending for the next beat.
const maxPresenceUsers = 60

// roomHub maps room names to live rooms. A room exists while it has a
// member: the last one out drops it (and its ring and presence timer), so
// clients that vanish leave nothing behind. Lock order: hub.mu, then a
// room's mu, and only join holds both.
type roomHub struct {
	cfg *Config

	mu    sync.Mutex
	rooms map[string]*room

	members atomic.Int64
}

func newRoomHub(cfg *Config) *roomHub {
	return &roomHub{cfg: cfg, rooms: make(map[string]*room)}
}

// room is one collaborative room. Everything in it is guarded by mu: a
// patch is versioned, relayed to the others, acked and kept in the ring
// under the lock, so every member sees versions in one order.
type room struct {
	hub      *roomHub
	name     string
	nameJSON []byte // the name as a JSON string, encoded once

	mu      sync.Mutex
	dead    bool // emptied and dropped from the hub; a join makes a new one
	members []*member
	editors int

	version  uint64 // of the last accepted patch; 0 before any
	accepted uint64 // patches accepted, for Config.RoomsSkipEvery

	// ring holds the last Config.RoomsRing op frames, oldest at head once
	// full. Every op with version > floor is in it.
	ring  []ringOp
	head  int
	floor uint64

	// Presence waiting for the next beat, in the order it changed. The
	// timer runs only while something waits: an idle room costs nothing.
	dirty     []*member
	beat      *time.Timer
	beatArmed bool
}

type ringOp struct {
	v     uint64
	frame []byte
}

// member is one joined /rooms connection.
type member struct {
	sk     *sock
	room   *room
	id     string
	idJSON []byte // id as a JSON string, encoded once
	editor bool

	// Guarded by room.mu.
	idx    int // in room.members
	gone   bool
	dirty  bool   // in room.dirty
	pres   []byte // latest presence entry {"id":..,"ts":..,"cursor":..}
	presTS int64
	slot   int // during a beat: 1+its index among the users sent, else 0
}

// counts reports live rooms and their members.
func (h *roomHub) counts() (rooms int, members int64) {
	h.mu.Lock()
	rooms = len(h.rooms)
	h.mu.Unlock()
	return rooms, h.members.Load()
}

// lookup returns the live room called name, or nil.
func (h *roomHub) lookup(name string) *room {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rooms[name]
}

// join adds m to the room called name (made if needed) and queues, under
// the room's lock, joined and then either the ops after since (when the
// ring still holds them all) or resync. wantEditor is the role asked for;
// m.editor says the role given.
func (h *roomHub) join(name string, m *member, wantEditor bool, since *int64) {
	h.mu.Lock()
	r := h.rooms[name]
	if r != nil {
		r.mu.Lock()
		if r.dead { // its last member is leaving; leave deletes only its own room
			r.mu.Unlock()
			r = nil
		}
	}
	if r == nil {
		r = &room{hub: h, name: name, nameJSON: appendJSONString(nil, name)}
		r.mu.Lock()
		h.rooms[name] = r
	}
	h.mu.Unlock()
	defer r.mu.Unlock()

	capped := false
	m.editor = wantEditor
	if wantEditor && r.editors >= h.cfg.RoomsEditorCap {
		m.editor, capped = false, true
	}
	if m.editor {
		r.editors++
	}
	m.room = r
	m.idx = len(r.members)
	r.members = append(r.members, m)
	h.members.Add(1)

	frames := [][]byte{sealFrame(appendJoined(frameBuf(96+len(r.nameJSON)), r.nameJSON, m.editor, r.version, len(r.members), capped), opText)}
	if since != nil {
		s := uint64(*since)
		if s > r.version || s < r.floor {
			frames = append(frames, sealFrame(appendResync(frameBuf(48), r.version), opText))
		} else {
			frames = r.appendOpsAfter(frames, s)
		}
	}
	m.sk.sendAll(frames)
}

// appendOpsAfter appends the ring's frames of versions above s, oldest
// first.
func (r *room) appendOpsAfter(frames [][]byte, s uint64) [][]byte {
	n := len(r.ring)
	at := func(i int) ringOp { return r.ring[(r.head+i)%n] }
	first := sort.Search(n, func(i int) bool { return at(i).v > s })
	for i := first; i < n; i++ {
		frames = append(frames, at(i).frame)
	}
	return frames
}

// leave removes m; the last member out drops the room.
func (h *roomHub) leave(m *member) {
	r := m.room
	r.mu.Lock()
	last := len(r.members) - 1
	moved := r.members[last]
	r.members[m.idx] = moved
	moved.idx = m.idx
	r.members[last] = nil
	r.members = r.members[:last]
	m.gone = true
	if m.editor {
		r.editors--
	}
	empty := len(r.members) == 0
	if empty {
		r.dead = true
		if r.beat != nil {
			r.beat.Stop()
		}
		r.ring, r.dirty = nil, nil
	}
	r.mu.Unlock()
	h.members.Add(-1)
	if empty {
		h.mu.Lock()
		if h.rooms[r.name] == r {
			delete(h.rooms, r.name)
		}
		h.mu.Unlock()
	}
}

// patch applies an editor's patch: the next version, one op frame queued
// to every other member and kept in the ring, and the ack to the sender,
// all under the lock. A queue that is full closes that member (1008); it
// never blocks the room.
func (r *room) patch(m *member, id []byte, ts int64, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.accepted++
	if k := uint64(r.hub.cfg.RoomsSkipEvery); k > 0 && r.accepted%k == 0 {
		r.version += 2
	} else {
		r.version++
	}
	v := r.version
	op := sealFrame(appendOp(frameBuf(80+len(r.nameJSON)+len(m.idJSON)+len(data)), r.nameJSON, m.idJSON, v, ts, data), opText)
	for _, o := range r.members {
		if o != m {
			o.sk.send(op)
		}
	}
	m.sk.send(sealFrame(appendAck(frameBuf(64+len(id)), id, v, ts), opText))
	r.keep(v, op)
}

// keep puts an op in the ring, evicting the oldest once it is full.
func (r *room) keep(v uint64, frame []byte) {
	if n := r.hub.cfg.RoomsRing; len(r.ring) < n {
		r.ring = append(r.ring, ringOp{v, frame})
		return
	}
	r.floor = r.ring[r.head].v
	r.ring[r.head] = ringOp{v, frame}
	r.head = (r.head + 1) % len(r.ring)
}

// presence records m's latest presence entry (encoded by the caller,
// outside the lock) for the next beat, arming the beat if it is idle.
func (r *room) presence(m *member, ts int64, entry []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.gone {
		return
	}
	m.pres, m.presTS = entry, ts
	if !m.dirty {
		m.dirty = true
		r.dirty = append(r.dirty, m)
	}
	r.arm()
}

// arm starts the beat timer unless it is running. Called with mu held.
func (r *room) arm() {
	if r.beatArmed {
		return
	}
	r.beatArmed = true
	if r.beat == nil {
		r.beat = time.AfterFunc(r.hub.cfg.RoomsPresenceBeat, r.flushPresence)
	} else {
		r.beat.Reset(r.hub.cfg.RoomsPresenceBeat)
	}
}

// flushPresence is one beat: the up to maxPresenceUsers members whose
// presence changed first are sent to every member, each member without
// its own entry. Members that did not change all get one shared frame;
// each changed member gets the same list less itself. So a beat encodes
// at most maxPresenceUsers+1 frames however big the room.
func (r *room) flushPresence() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.beatArmed = false
	if r.dead {
		return
	}
	var users []*member
	rest := r.dirty[:0]
	for _, m := range r.dirty {
		switch {
		case m.gone:
		case len(users) < maxPresenceUsers:
			m.dirty = false
			users = append(users, m)
		default:
			rest = append(rest, m)
		}
	}
	clear(r.dirty[len(rest):])
	r.dirty = rest
	if len(rest) > 0 {
		r.arm()
	}
	if len(users) == 0 {
		return
	}

	// The oldest ts of all, and of all but the one holding it.
	oldest, second := 0, -1
	size := 0
	for i, m := range users {
		m.slot = i + 1
		size += len(m.pres) + 1
		if i == 0 {
			continue
		}
		if m.presTS < users[oldest].presTS {
			oldest, second = i, oldest
		} else if second < 0 || m.presTS < users[second].presTS {
			second = i
		}
	}
	encode := func(skip int) []byte {
		ts := users[oldest].presTS
		if skip == oldest {
			ts = users[second].presTS
		}
		n := len(users)
		if skip >= 0 {
			n--
		}
		b := appendPresenceHead(frameBuf(80+len(r.nameJSON)+size), r.nameJSON, ts, n)
		first := true
		for i, m := range users {
			if i == skip {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, m.pres...)
		}
		return sealFrame(append(b, "]}"...), opText)
	}
	shared := encode(-1)
	for _, o := range r.members {
		switch {
		case o.slot == 0:
			o.sk.send(shared)
		case len(users) > 1:
			o.sk.send(encode(o.slot - 1))
		}
	}
	for _, m := range users {
		m.slot = 0
	}
}

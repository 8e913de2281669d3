package refserver

import "sync"

// hub maps channel names to their subscribers. Publishing holds the read
// lock while it queues one shared frame to every subscriber; subscribe and
// unsubscribe take the write lock. Each channel keeps a slice for fast
// iteration and an index for O(1) removal.
type hub struct {
	mu       sync.RWMutex
	channels map[string]*channel
	subs     int // total subscriptions
}

type channel struct {
	list  []*sock
	index map[*sock]int
}

func newHub() *hub { return &hub{channels: make(map[string]*channel)} }

// subscribe adds s to name; it reports false if s was already there.
func (h *hub) subscribe(name string, s *sock) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.channels[name]
	if ch == nil {
		ch = &channel{index: make(map[*sock]int)}
		h.channels[name] = ch
	}
	if _, ok := ch.index[s]; ok {
		return false
	}
	ch.index[s] = len(ch.list)
	ch.list = append(ch.list, s)
	h.subs++
	return true
}

// unsubscribe removes s from name; an emptied channel is forgotten.
func (h *hub) unsubscribe(name string, s *sock) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.channels[name]
	if ch == nil {
		return
	}
	i, ok := ch.index[s]
	if !ok {
		return
	}
	last := len(ch.list) - 1
	if i != last {
		moved := ch.list[last]
		ch.list[i] = moved
		ch.index[moved] = i
	}
	ch.list[last] = nil
	ch.list = ch.list[:last]
	delete(ch.index, s)
	h.subs--
	if len(ch.list) == 0 {
		delete(h.channels, name)
	}
}

// fanout queues frames to every subscriber of name except the socket
// with socket id exclude, under the read lock (sock.sendEvents never
// blocks, and counts the deliveries).
func (h *hub) fanout(name string, frames [][]byte, exclude string) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	ch := h.channels[name]
	if ch == nil {
		return
	}
	for _, s := range ch.list {
		if exclude != "" && s.socketID == exclude {
			continue
		}
		s.sendEvents(frames)
	}
}

// has reports whether name has at least one subscriber, so a publisher can
// skip encoding an event nobody will receive.
func (h *hub) has(name string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.channels[name] != nil
}

func (h *hub) counts() (channels, subscriptions int) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.channels), h.subs
}

package evloop

// timers is a loop's min-heap of connections by timer due time: one
// entry per connection at most (Conn.hidx is its place, -1 when unset),
// so setting or cancelling a timer is O(log n) and allocates nothing
// once the heap has grown to the loop's connection count.
type timers []*Conn

func (h timers) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].idx < h[j].idx // equal due times run in the order of Add
}

func (h timers) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].hidx, h[j].hidx = int32(i), int32(j)
}

func (h timers) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h timers) down(i int) bool {
	start := i
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > start
}

// set puts c in the heap at its (new) due time c.at.
func (h *timers) set(c *Conn) {
	if c.hidx >= 0 {
		if !h.down(int(c.hidx)) {
			h.up(int(c.hidx))
		}
		return
	}
	c.hidx = int32(len(*h))
	*h = append(*h, c)
	h.up(int(c.hidx))
}

// remove takes c out of the heap, if it is in it.
func (h *timers) remove(c *Conn) {
	i := int(c.hidx)
	if i < 0 {
		return
	}
	last := len(*h) - 1
	if i != last {
		h.swap(i, last)
	}
	(*h)[last] = nil
	*h = (*h)[:last]
	c.hidx = -1
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
}

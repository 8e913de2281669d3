package agents

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Hub is the coordinator's listener and the agents' sessions across the
// points of a sweep. An agent joins once (hello) and stays: between
// points its session is idle, watched so that a dropped connection is
// noticed and forgotten; a point (Hub.Run) claims the sessions of its
// agents, and gives them back when the point was measured. A failed point
// keeps them too (the agents were told abort and wait). Close says
// done to every idle agent: they exit. Every connection must prove the
// hub's token first (auth.go), and is admitted to try by admit.go's
// rules: accepts paced and rated per source, at most MaxPending trying
// at once, each for at most AnswerTimeout, a newcomer taking the place of
// one that has had MinHold.
type Hub struct {
	ln    net.Listener
	n     int // agents the sweep has: hello.index must be below
	token Token
	log   io.Writer

	turned   atomic.Int64 // connections closed because MaxPending were authenticating
	evicted  atomic.Int64 // connections closed in their handshake for a newer one
	limited  atomic.Int64 // connections closed past their source's rate
	accepted atomic.Int64 // connections accepted
	adm      *admission
	now      func() time.Time // the admission's clock (time.Now)

	mu      sync.Mutex
	idle    map[int]*idleSession
	busy    map[int]bool
	joining map[*conn]*pending // connections authenticating, closed by Close
	accepts uint64             // connections accepted so far: each pending's order
	peers   map[int]string     // each agent's latest session, as the coordinator saw it come from
	arrived chan struct{}      // a token when idle gained a session
	closed  bool
	wg      sync.WaitGroup

	// beforeWelcome, when set (tests only), runs in a point's session
	// goroutine just before it welcomes agent index: a test orders the
	// point's abort against the welcome with it.
	beforeWelcome func(ctx context.Context, index int)
}

// pending is a connection in its handshake: the order it was accepted
// in, and when.
type pending struct {
	order uint64
	since time.Time
}

// idleSession is a joined agent between points; its watcher reads the
// connection until the session is claimed (read deadline in the past) or
// the agent leaves.
type idleSession struct {
	c       *conn
	index   int
	claimed bool
	left    chan struct{} // closed when the watcher returned
}

// NewHub listens on addr for the agents 0..n-1 of a sweep, who must
// prove they hold token; with tlsConf (TLSFiles.ServerConfig) every
// connection is TLS first, and the token's proof runs inside it.
func NewHub(addr string, n int, token Token, log io.Writer, tlsConf *tls.Config) (*Hub, error) {
	return newHub(addr, n, token, log, tlsConf, time.Now)
}

// newHub is NewHub whose admission reads the clock now: the tests move it
// past MinHold instead of sleeping it out.
func newHub(addr string, n int, token Token, log io.Writer, tlsConf *tls.Config, now func() time.Time) (*Hub, error) {
	if n < 1 {
		return nil, fmt.Errorf("agents: %d agents", n)
	}
	if token.IsZero() {
		return nil, fmt.Errorf("agents: no token: a hub admits only agents that prove one")
	}
	if log == nil {
		log = io.Discard
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if tlsConf != nil {
		// The handshake runs on the first read, under authenticate's
		// deadline and within MaxPending, like the token's proof.
		ln = tls.NewListener(ln, tlsConf)
	}
	h := &Hub{ln: ln, n: n, token: token, log: log, idle: map[int]*idleSession{}, busy: map[int]bool{}, arrived: make(chan struct{}, 1),
		adm: newAdmission(n), now: now}
	h.wg.Add(1)
	go h.accept()
	return h, nil
}

// Addr is the address agents dial.
func (h *Hub) Addr() string { return h.ln.Addr().String() }

// Peers is the address each joined agent's latest session came from: the
// harness finds an agent that runs on this machine by it (its own CPU is
// the generator's, not another tenant's).
func (h *Hub) Peers() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.peers))
	for _, p := range h.peers {
		out = append(out, p)
	}
	return out
}

// SetLog redirects the hub's own lines (each point has its log).
func (h *Hub) SetLog(w io.Writer) {
	if w == nil {
		w = io.Discard
	}
	h.mu.Lock()
	h.log = w
	h.mu.Unlock()
}

func (h *Hub) logf(format string, a ...any) {
	h.mu.Lock()
	w := h.log
	h.mu.Unlock()
	fmt.Fprintf(w, "coordinator: "+format+"\n", a...)
}

func (h *Hub) accept() {
	defer h.wg.Done()
	for {
		if d := h.adm.pace(h.now()); d > 0 {
			time.Sleep(d) // at most 1/AcceptRate: Close waits no longer
			continue
		}
		nc, err := h.ln.Accept()
		if err != nil {
			return
		}
		h.accepted.Add(1)
		now := h.now()
		if !h.adm.allow(nc.RemoteAddr(), now) {
			// One line for the first and then every 1000th: a flood
			// must not fill the log.
			if n := h.limited.Add(1); n%1000 == 1 {
				h.logf("%d connections closed unread so far past their source's rate of %d a second (the last from %s)", n, SourceRate, nc.RemoteAddr())
			}
			nc.Close()
			continue
		}
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			nc.Close()
			return
		}
		if len(h.joining) >= MaxPending {
			// Full. The peer that has held a place longest gives it to
			// the newcomer once it has had MinHold to answer: peers that
			// stall (after their hello or before it) and reconnect would
			// otherwise hold every place and lock a real agent out.
			if old, ok := evictable(h.joining, now); ok {
				delete(h.joining, old)
				h.mu.Unlock()
				if n := h.evicted.Add(1); n%1000 == 1 {
					h.logf("%d connections closed so far in their handshake for newer ones: %d were authenticating, none answered within %s (the last from %s)", n, MaxPending, MinHold, old.c.RemoteAddr())
				}
				old.c.Close() // its join fails and logs it
				h.mu.Lock()
			} else {
				h.mu.Unlock()
				// Logged before the close, so that the log says it by
				// the time the peer sees the connection end.
				if n := h.turned.Add(1); n%1000 == 1 {
					h.logf("%d connections closed unread so far: %d were already authenticating, each for less than %s (from %s)", n, MaxPending, MinHold, nc.RemoteAddr())
				}
				nc.Close()
				continue
			}
		}
		raw := nc
		if tc, ok := nc.(*tls.Conn); ok {
			raw = tc.NetConn()
		}
		if tc, ok := raw.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		c := newConn(nc)
		if h.joining == nil {
			h.joining = map[*conn]*pending{}
		}
		h.accepts++
		pd := &pending{order: h.accepts, since: now}
		h.joining[c] = pd
		h.wg.Add(1)
		h.mu.Unlock()
		go func() {
			defer h.wg.Done()
			h.join(c)
		}()
	}
}

// authenticating is how many connections are in their handshake.
func (h *Hub) authenticating() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.joining)
}

// join authenticates a new connection and parks the session as idle. A
// rejoining agent replaces its idle session; one whose index is in a
// point is refused (it retries: the point fails on the lost session).
func (h *Hub) join(c *conn) {
	who := "agent at " + c.c.RemoteAddr().String()
	idx, err := h.authenticate(c)
	h.mu.Lock()
	delete(h.joining, c)
	h.mu.Unlock()
	if err != nil {
		// Not one of ours, or broken before it proved itself: the
		// missing index is named when its point's barrier times out.
		// The peer learns nothing but that it failed.
		h.logf("%s: not admitted: %v", who, err)
		_ = c.c.SetWriteDeadline(time.Now().Add(time.Second))
		_ = c.send(tAbort, &Abort{Reason: errAuth.Error()})
		c.c.Close()
		return
	}
	refuse := func(reason string) {
		h.logf("%s: %s", who, reason)
		_ = c.c.SetWriteDeadline(time.Now().Add(time.Second))
		_ = c.send(tAbort, &Abort{Reason: reason})
		c.c.Close()
	}
	if idx >= h.n {
		refuse(fmt.Sprintf("hello.index: %d, this sweep has agents 0 to %d", idx, h.n-1))
		return
	}
	h.mu.Lock()
	switch {
	case h.closed:
		h.mu.Unlock()
		refuse("the sweep is over")
		return
	case h.busy[idx]:
		h.mu.Unlock()
		refuse(fmt.Sprintf("agent %d is in a point on another connection; rejoin after it", idx))
		return
	}
	old := h.idle[idx]
	s := &idleSession{c: c, index: idx, left: make(chan struct{})}
	h.idle[idx] = s
	if h.peers == nil {
		h.peers = map[int]string{}
	}
	h.peers[idx] = c.c.RemoteAddr().String()
	h.mu.Unlock()
	if old != nil {
		old.c.c.Close()
		h.logf("agent %d rejoined from %s (its old connection closed)", idx, c.c.RemoteAddr())
	} else {
		h.logf("agent %d joined from %s", idx, c.c.RemoteAddr())
	}
	select {
	case h.arrived <- struct{}{}:
	default:
	}
	h.watch(s)
}

// watch reads an idle session: an agent says nothing between points, so
// any read that returns is the session ending (or claimed: the deadline).
func (h *Hub) watch(s *idleSession) {
	defer close(s.left)
	var typ string
	var err error
	for {
		typ, _, err = s.c.recv()
		// What an aborted point's agent still sends of it is skipped:
		// its clock samples and ready too, sent in answer to a welcome
		// before it read the abort (a failed point releases its
		// sessions at once; dropping one for a late ping lost that agent
		// for the next point).
		if err != nil || !pointMessage(typ) {
			break
		}
	}
	h.mu.Lock()
	claimed := s.claimed
	if !claimed && h.idle[s.index] == s {
		delete(h.idle, s.index)
	}
	h.mu.Unlock()
	if claimed {
		return
	}
	s.c.c.Close()
	if err == nil {
		err = fmt.Errorf("type: got %q between points", typ)
	}
	h.logf("agent %d left between points: %v", s.index, err)
}

// pointMessage reports whether typ is one an agent sends within a point.
func pointMessage(typ string) bool {
	switch typ {
	case tPing, tReady, tStarted, tResult:
		return true
	}
	return false
}

// claim takes the idle sessions of the indexes in want that are there,
// marking them busy.
func (h *Hub) claim(want func(int) bool) map[int]*conn {
	h.mu.Lock()
	var got []*idleSession
	for i, s := range h.idle {
		if want(i) {
			s.claimed = true
			delete(h.idle, i)
			h.busy[i] = true
			got = append(got, s)
		}
	}
	h.mu.Unlock()
	out := map[int]*conn{}
	for _, s := range got {
		_ = s.c.c.SetReadDeadline(time.Now()) // stops the watcher
		<-s.left
		_ = s.c.c.SetReadDeadline(time.Time{})
		out[s.index] = s.c
	}
	return out
}

// release ends a point for agent idx: its session parks as idle again.
func (h *Hub) release(idx int, c *conn) {
	h.mu.Lock()
	delete(h.busy, idx)
	if h.closed {
		h.mu.Unlock()
		c.c.Close()
		return
	}
	s := &idleSession{c: c, index: idx, left: make(chan struct{})}
	if old := h.idle[idx]; old != nil { // rejoined meanwhile: keep the newer
		h.mu.Unlock()
		c.c.Close()
		return
	}
	h.idle[idx] = s
	h.mu.Unlock()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.watch(s)
	}()
}

// unbusy forgets agent idx's lost session in a point (it may rejoin).
func (h *Hub) unbusy(idx int) {
	h.mu.Lock()
	delete(h.busy, idx)
	h.mu.Unlock()
}

// Close ends the sweep: every idle agent is told done (and exits), the
// listener closes.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	var idle []*idleSession
	for _, s := range h.idle {
		s.claimed = true
		idle = append(idle, s)
	}
	h.idle = map[int]*idleSession{}
	for c := range h.joining {
		c.c.Close() // its join fails and logs it
	}
	h.mu.Unlock()
	h.ln.Close()
	for _, s := range idle {
		_ = s.c.c.SetReadDeadline(time.Now())
		<-s.left
		_ = s.c.c.SetWriteDeadline(time.Now().Add(time.Second))
		_ = s.c.send(tDone, &Done{})
		s.c.c.Close()
	}
	h.wg.Wait()
}

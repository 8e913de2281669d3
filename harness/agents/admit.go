package agents

import (
	"net"
	"sync"
	"time"
)

// Admission (doc.go, "Authentication"): what an unauthenticated peer may
// cost the hub, decided in one place, before and as a connection is
// accepted.
//
//   - Accepting is paced: at most AcceptRate connections a second (a
//     burst of AcceptBurst), whoever sends them. A peer that reconnects
//     as soon as it is closed waits in the kernel's listen queue, which
//     costs the harness nothing, instead of making the hub accept and
//     drop tens of thousands of connections a second (a core).
//   - Each source address has its own rate, SourceRate a second (a
//     burst of SourceBurst, or twice the sweep's agents if more): past
//     it, a connection is closed as it is accepted, unread.
//   - A place in the handshake is held by no one for long: the answer to
//     the challenge is due within AnswerTimeout of the accept, and the
//     hello earns nothing. When every place is taken, a newcomer takes
//     the place of the oldest that has held one for MinHold (long enough
//     for an agent on any network to answer), else it is closed unread:
//     peers that stall after their hello, or say nothing, turn over and
//     cannot hold a place against an agent, which answers at once.
const (
	AcceptRate    = 200
	AcceptBurst   = MaxPending
	SourceRate    = 50
	SourceBurst   = 2 * MaxPending
	AnswerTimeout = 3 * time.Second
	MinHold       = 250 * time.Millisecond
	// maxSources bounds the sources remembered: past it, those whose
	// bucket is full again are forgotten (they would start full anyway).
	maxSources = 4096
)

// bucket is a token bucket: rate tokens a second up to burst.
type bucket struct {
	tokens float64
	last   time.Time
}

// take takes a token at now, refilling first; false when there is none.
func (b *bucket) take(now time.Time, rate, burst float64) bool {
	b.refill(now, rate, burst)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (b *bucket) refill(now time.Time, rate, burst float64) {
	if b.last.IsZero() {
		b.tokens = burst
	} else if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.tokens = min(burst, b.tokens+dt*rate)
	}
	b.last = now
}

// wait is how long until a token is there at now (0: one is).
func (b *bucket) wait(now time.Time, rate, burst float64) time.Duration {
	b.refill(now, rate, burst)
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - b.tokens) / rate * float64(time.Second))
}

// admission is the hub's pacing and per-source rates.
type admission struct {
	mu          sync.Mutex
	global      bucket
	sources     map[string]*bucket
	sourceBurst float64
}

func newAdmission(agents int) *admission {
	return &admission{sources: map[string]*bucket{}, sourceBurst: float64(max(SourceBurst, 2*agents))}
}

// pace is how long the accept loop waits before its next accept at now;
// 0 takes a token.
func (a *admission) pace(now time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if d := a.global.wait(now, AcceptRate, AcceptBurst); d > 0 {
		return d
	}
	a.global.tokens--
	return 0
}

// allow reports whether a connection from addr's host may be served at
// now (its source's rate).
func (a *admission) allow(addr net.Addr, now time.Time) bool {
	host := addr.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.sources[host]
	if b == nil {
		if len(a.sources) >= maxSources {
			for k, o := range a.sources {
				if o.refill(now, SourceRate, a.sourceBurst); o.tokens >= a.sourceBurst {
					delete(a.sources, k)
				}
			}
		}
		if len(a.sources) >= maxSources {
			return false // every source remembered is spending: a flood
		}
		b = &bucket{}
		a.sources[host] = b
	}
	return b.take(now, SourceRate, a.sourceBurst)
}

// evictable is, of the pending connections, the one that has held its
// place longest, if for at least MinHold at now; nil otherwise.
func evictable[K comparable](places map[K]*pending, now time.Time) (K, bool) {
	var oldest K
	var first *pending
	for k, pd := range places {
		if first == nil || pd.order < first.order {
			oldest, first = k, pd
		}
	}
	if first == nil || now.Sub(first.since) < MinHold {
		var none K
		return none, false
	}
	return oldest, true
}

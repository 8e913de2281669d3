package agents

import (
	"net"
	"testing"
	"time"
)

// TestAdmission: admit.go's rules on a clock the test moves, so that a
// flood's cost is counted, not timed. Over 10 s of a loop that accepts
// whenever pace lets it, at most AcceptRate a second (and the burst) are
// accepted; one source past its rate is refused while another is
// served; a place is given up only after MinHold, oldest first; the
// sources remembered stay bounded.
func TestAdmission(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	a := newAdmission(1)
	accepted, now := 0, t0
	for now.Before(t0.Add(10 * time.Second)) {
		if d := a.pace(now); d > 0 {
			now = now.Add(d)
			continue
		}
		accepted++
		now = now.Add(10 * time.Microsecond) // a peer that reconnects at once
	}
	if max := 10*AcceptRate + AcceptBurst; accepted > max || accepted < 10*AcceptRate {
		t.Errorf("accepted %d in 10 s, want about %d a second and at most %d", accepted, AcceptRate, max)
	}

	a = newAdmission(1)
	flood := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 40000}
	agent := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40001}
	served := 0
	for i := range 1000 {
		if a.allow(flood, t0.Add(time.Duration(i)*time.Millisecond)) { // 1000 a second for 1 s
			served++
		}
	}
	if max := SourceBurst + SourceRate + 1; served > max {
		t.Errorf("one source served %d of 1000 in 1 s, want at most %d", served, max)
	}
	if !a.allow(agent, t0.Add(time.Second)) {
		t.Error("another source refused while the first floods")
	}
	if a := newAdmission(100); a.sourceBurst != 200 {
		t.Errorf("100 agents from one address: a burst of %.0f, want 200", a.sourceBurst)
	}
	for i := range 2 * maxSources {
		a.allow(&net.TCPAddr{IP: net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)), Port: 1}, t0.Add(time.Duration(i)*time.Hour))
	}
	if len(a.sources) > maxSources {
		t.Errorf("%d sources remembered, want at most %d", len(a.sources), maxSources)
	}

	places := map[int]*pending{1: {order: 1, since: t0}, 2: {order: 2, since: t0.Add(time.Millisecond)}}
	if _, ok := evictable(places, t0.Add(MinHold-time.Nanosecond)); ok {
		t.Error("a place given up before MinHold")
	}
	if k, ok := evictable(places, t0.Add(MinHold)); !ok || k != 1 {
		t.Errorf("at MinHold: %v %v, want the oldest (1)", k, ok)
	}
}

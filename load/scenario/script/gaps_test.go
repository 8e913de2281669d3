package script

import (
	"testing"

	"github.com/ceiling-bench/ceiling/load"
)

// TestGapsCountBySendTime: a gap counts with the message that reveals
// it, as that message counts: by its send's timestamp, so that a
// talker's ack and a listener's relay of one send, arriving on either
// side of the window's start, agree (counting by arrival once made a
// listener's gaps differ from 3 x its talker's on a slow machine); an
// ignored message by its arrival, up to the drain's end.
func TestGapsCountBySendTime(t *testing.T) {
	s := roomsScenario(t, 1)
	s.w = load.Window{Open: 0, Start: 100, End: 200, Drain: 300}
	c := s.conns[0]
	relay, ignore := &recvSpec{Type: "relay"}, &recvSpec{Type: "ignore"}
	for _, m := range []struct {
		r            *recvSpec
		ts, now, gap int64
	}{
		{relay, 90, 105, 1},  // sent before the start: not counted
		{relay, 150, 160, 2}, // counted
		{relay, 190, 250, 4}, // sent in the window, arrived in the drain: counted
		{relay, 190, 300, 8}, // arrived after the drain: late, not counted
		{ignore, 0, 90, 16},  // arrived before the start: not counted
		{ignore, 0, 250, 32}, // arrived in the drain: counted
		{ignore, 0, 310, 64}, // after the drain: not counted
	} {
		c.record(m.r, 10, m.ts, m.gap, m.now)
	}
	if got := c.sh.kinds[0].gaps; got != 2+4+32 {
		t.Errorf("gaps %d, want %d (the sends in the window, the ignored arrivals up to the drain)", got, 2+4+32)
	}
}

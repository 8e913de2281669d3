package agents

import (
	"time"

	"github.com/ceiling-bench/ceiling/load"
)

// Sample is one ping/pong exchange: t1 and t4 on the agent's wall clock,
// t2 and t3 on the coordinator's (unix ns).
type Sample struct{ T1, T2, T3, T4 int64 }

// RTT is the round trip without the coordinator's turnaround.
func (s Sample) RTT() int64 { return (s.T4 - s.T1) - (s.T3 - s.T2) }

// Offset is the coordinator's wall clock minus the agent's (NTP's
// estimate; wrong by at most RTT/2).
func (s Sample) Offset() int64 { return ((s.T2 - s.T1) + (s.T3 - s.T4)) / 2 }

// Best is the sample with the smallest round trip: the least queueing,
// the tightest offset bound.
func Best(samples []Sample) Sample {
	best := samples[0]
	for _, s := range samples[1:] {
		if s.RTT() < best.RTT() {
			best = s
		}
	}
	return best
}

// agentClock is the agent's view of time: its wall clock (shifted by the
// test-only skew) for placing the window, its monotonic clock (load.Mono)
// for everything measured.
type agentClock struct {
	skew time.Duration
}

func (c agentClock) wall() int64 { return time.Now().UnixNano() + int64(c.skew) }

// toMono converts a coordinator wall time to the agent's monotonic clock
// through offset (coordinator minus agent): the wall clock is read once,
// beside the monotonic one, and never again.
func (c agentClock) toMono(coordWall, offset int64) int64 {
	mono, wall := load.Mono(), c.wall()
	return mono + (coordWall - offset - wall)
}

package wire

// AgentReport is one agent's part of a point, as the point lists it
// (curve[].agents).
type AgentReport struct {
	Index       int      `json:"index"`
	Connections int      `json:"connections"`
	RateOpsPerS *float64 `json:"rate_ops_per_s"` // its share of --rate; null in a closed loop
	// RTTNs and ClockOffsetNs are its best clock sample's (coordinator
	// wall minus agent wall); StartSkewNs is where its window opened on
	// the coordinator's clock (arrival of "started" - rtt/2 - WakeLateNs)
	// minus the planned start: positive is late.
	RTTNs         int64 `json:"rtt_ns"`
	ClockOffsetNs int64 `json:"clock_offset_ns"`
	StartSkewNs   int64 `json:"start_skew_ns"`
	// WakeLateNs is how late the agent's own timer woke for its window
	// start, on its monotonic clock: the part of the skew that is
	// scheduling, not clocks.
	WakeLateNs int64 `json:"wake_late_ns"`
	// LateStart: its start skew was over the limit (50 ms). The point
	// stands only if the agent also fell behind (a starved agent's
	// "started" is late too); otherwise it failed, naming the agent.
	LateStart      bool    `json:"late_start,omitempty"`
	ThroughputPerS float64 `json:"throughput_per_s"`
	P99Ns          int64   `json:"p99_ns"`
	// Behind and Evidence are the generator half of the verdict rule
	// applied to this agent alone (filled by the harness).
	Behind   bool   `json:"behind"`
	Evidence string `json:"evidence"`
	Failure  string `json:"failure,omitempty"`
	// SourceAddrs are the local addresses its connections came from
	// (its generator.source_addrs; absent when the kernel picked).
	SourceAddrs []string `json:"source_addrs,omitempty"`
	// Network is where the agent ran: "loopback" (a process on the host's
	// loopback), "netns" (a network namespace of its own on the sweep's
	// bridge) or "remote" (it dialed AGENTS_LISTEN); set by the harness.
	Network string `json:"network,omitempty"`
	// Peer is the address the coordinator saw its session come from.
	Peer string `json:"peer,omitempty"`
}

// Agent is one agent's part of a point as the coordinator hands it over
// (harness/agents.Agent): what the point's document lists (AgentReport,
// curve[].agents) and the agent's own Result, which the document does
// not hold (its figures are in the report, the merged ones are the
// point's) and the harness judges the agent by.
type Agent struct {
	AgentReport
	Result *Result
}

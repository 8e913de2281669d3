// Package agents runs each point of load through several generator
// processes (`ceiling agent`) that a coordinator starts together, and
// merges what they measured exactly.
//
// # Roles
//
// The coordinator is part of the harness: it listens, and the agents dial
// out to it (--coordinator host:port), so an agent needs no inbound port
// and can sit behind any NAT or in a Kubernetes pod. One agent session
// serves a whole sweep: the agent joins once (hello), then runs its segment
// of point after point (welcome .. result) until the coordinator says done.
// The coordinator's Hub keeps the joined sessions between points (idle,
// watched: one that leaves is forgotten, one that rejoins replaces it);
// Hub.Run claims a point's agents as they are or come idle, and gives
// them back after it, also after a failed point (the agents were told
// abort and wait for the next welcome). Whatever an aborted point still
// had in flight is skipped on both sides: the coordinator skips what
// comes before a point's first ping, the agent pongs that answer no ping
// of its point. The coordinator tells an agent abort only of a point it
// welcomed it to, and never welcomes it after the abort: a session the
// point had not welcomed when it failed hears nothing of it (an abort
// before the welcome read as the previous point's, and the agent ran a
// point the coordinator had given up). An agent redials a lost connection
// (AgentConfig.Rejoin times in a row). The harness's own agents get a
// Coordinator (a hub for one point, done after it); AGENTS_LISTEN keeps
// one Hub for the sweep.
//
// # Protocol
//
// JSON lines over TCP. Every line is an envelope {"v":2,"type":T,"body":B};
// the envelope and each body are decoded strictly: an unknown field, a
// missing version, another version or a bad value is refused with the
// field named ("ready.open: -1 is negative"), and the session ends. In
// order:
//
//	agent -> hello {index, nonce}              which segment it is (--index, or JOB_COMPLETION_INDEX)
//	coord -> challenge {nonce, proof}          the coordinator proves the token (auth.go)
//	agent -> auth {proof}                      the agent proves it; nothing else is sent before
//	coord -> welcome {agents, args, samples}   the point's `ceiling load` flags for this segment
//	agent -> ping {seq, t1}  (samples times)   clock: NTP's four timestamps, wall ns
//	coord -> pong {seq, t1, t2, t3}
//	agent -> ready {open, rtt_ns, offset_ns}   its connections are open: the barrier
//	coord -> go {load_at, window_start, window_end}   once all N are ready; coordinator wall ns
//	agent -> started {}                        sent as its window opens: the coordinator times it
//	agent -> result {result, latency, lag}     load.Result and its HdrHistograms, encoded
//	coord -> abort {reason}                    any time: a peer failed, the point is invalid
//	coord -> done {}                           between points: the sweep is over, the agent exits
//
// # Authentication
//
// Both ends hold a Token. Each proves it with an HMAC-SHA256 over both
// nonces, the index and its role; the coordinator first, so that an agent
// takes the point's flags (which aim load anywhere) only from a
// coordinator that holds its token. The hub says nothing but its challenge
// to a connection that has not proven the token, reads at most
// maxAuthLine bytes of each, and admits such connections by admit.go's
// rules, the agents' one admission: accepts paced (AcceptRate) and rated
// per source address (SourceRate), at most MaxPending trying at once,
// each answer due within AnswerTimeout, the hello earning nothing, and a
// newcomer taking the place of the oldest that has had MinHold.
//
// # Clocks
//
// Latency is measured only on the sending agent's own monotonic clock:
// nothing crosses machines but the window. The agent takes several
// ping/pong samples and keeps the one with the smallest round trip (least
// queueing): offset = ((t2-t1)+(t3-t4))/2 is the coordinator's wall clock
// minus the agent's, within rtt/2. The coordinator gives every agent the
// same start and window in its own wall time; each agent converts them to
// its monotonic clock through the offset (wall only places the window) and
// sleeps until then. The coordinator times each agent's "started" on its
// own clock (arrival - rtt/2 - how late the agent's own timer woke, which
// the agent reports: the window's edges are arithmetic on its monotonic
// clock, so a late wake-up does not move them) against the planned window
// start: that is the start skew each agent reports, and an agent more
// than MaxStartSkew late makes the point invalid. A test-only knob (`ceiling agent
// --wall-skew`) shifts one agent's wall clock to show the window still
// lines up.
//
// # Segments
//
// Agent i of N gets c_i = floor(C(i+1)/N) - floor(Ci/N) connections and
// r_i = R*c_i/C of the rate (Segment): the c_i sum to C exactly, every
// connection runs at the same rate R/C, and the r_i add up to R. With C < N
// only C agents run (one connection each).
//
// # Merge
//
// Every agent's latency (and lag) histogram arrives in HdrHistogram's V2
// compressed encoding with its exact min, max and out-of-range count. The
// coordinator checks each has the generator's configuration (lowest,
// highest, significant figures), merges them, and fails the point if hdr
// reports a single value dropped. Percentiles come from the merged
// histogram only, never from averaging agents' percentiles; throughput is
// the sum of the agents' rates over the common window. A missing, late or
// failed agent makes the point invalid, by name; an agent that fell behind
// makes the merged generator evidence its own (the worst agent's), so the
// harness's verdict calls the point generator-capped and lists the agents.
package agents

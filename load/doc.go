// Package load is the generator library behind `ceiling load`: it applies
// one point of load to a running WebSocket server and returns a Result
// whose figures can be trusted.
//
// The engine knows no protocol. Run builds the payload pool, asks the
// Scenario (echo, fanout) to Preflight and to Connect each connection
// through a connect strategy (bounded | stagger | all-at-once), then
// computes the Window: load starts when every connection is open (and
// subscribed), the warm-up is excluded, and the window is the next
// --duration. An observer goroutine creates --measure-marker and snapshots
// the generator's own counters at the window's edges, off the hot path.
//
// Every worker goroutine owns a Recorder (HdrHistograms and counters), so
// recording takes no lock; the Recorders are merged after all workers have
// stopped. A failed operation is data (a count by reason), never a stop.
// Every operation is counted when attempted (Recorder.Ops) and again when
// it succeeded (Recorder.OK: every reply back, a publish the server
// accepted); the summary's achieved rate is the successes, the attempted
// rate beside it, so an overloaded server cannot read as one that kept up.
//
// Nothing measured is not a measurement: the fan-out Preflight proves
// delivery end to end (a subscriber, one signed publish, the event must
// arrive) before any load, and a run whose window got no message back
// fails with ErrNothingArrived in summary.failure rather than reporting a
// throughput of zero with a verdict.
//
// Two loops:
//
//   - closed (default): operation -> await -> operation; finds the ceiling.
//   - open (--rate): a Pacer gives each connection a phase-shifted schedule;
//     a writer sends on schedule whether or not earlier operations finished
//     and a reader matches replies, and latency is measured from the
//     scheduled time (coordinated omission corrected). --max-inflight bounds
//     how far behind it may fall; reaching it saturates the run.
//
// Hot path: a batch is framed into one buffer and sent with one write
// (wsconn), replies are parsed from wsconn's large read buffer, payloads are
// slices of one pool, and timestamps are int64 monotonic nanoseconds: no
// allocation per message (tested with testing.AllocsPerRun).
//
// The result carries the generator's evidence about itself (CPU over the
// window from getrusage, schedule lag, goroutine runnable latency from
// runtime/metrics, the run delay of the threads that carried the load from
// schedstat (selfstats.go), read syscalls per message), because a
// generator-capped verdict must not rest on CPU alone.
package load

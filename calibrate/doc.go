// Package calibrate measures the generator's own cap: how many messages per
// second one generator core can drive when the server side costs nothing,
// for each scenario and batch size. `ceiling calibrate` runs it; `ceiling
// sweep` records its document in the result's meta (CALIBRATE=1,
// CALIBRATION=FILE) and flags a point whose throughput comes within
// NearCapPct of the cap for its batch, scaled by the generator's cores: such
// a point may measure the generator, whatever its CPU says.
//
// # The null sink
//
// The server side is a null sink (ServeSink): raw-syscall epoll loops
// (Echoer), one per core the sink is given, that never parse a frame. For
// echo it answers every client frame's worth of bytes (a masked frame of
// --record-size bytes) with a pre-built unmasked server frame of the same
// size, written in one write(2) per read (WritesBatched). Its cost per
// message is the TCP stack's and little more, the same syscalls the
// generator makes without the generator's parsing and accounting, so with
// at least as many cores as the generator it is never the side that
// saturates first; each step records the sink's CPU to show it
// (Step.SinkCores, Cap.SinkLimited). WritesPerMessage writes each reply on
// its own, as most servers do: the generator then gets a segment per
// message, as against them, and its cap is lower (about 2.7x at batch 10
// on loopback here, docs/sweep.md), at the price of a sink that costs
// about what the generator does.
//
// The same Echoer, with a batch of masked client frames as its reply and
// SO_RCVLOWAT set to a batch of replies, is `make bench`'s syscall-only
// floor generator (benchmark/efficiency): the kernel's floor per message.
//
// # The ramp
//
// Run starts the sink pinned to the sink CPUs (its own process, through
// pinning.Command, like the sweep's server) and, per batch, runs the
// generator as the sweep does (the GENERATOR contract: the same flags,
// marker and JSON, pinned to the generator CPUs with GOMAXPROCS their
// count) at growing connection counts (Config.Conns). A step's generator
// busy fraction is its self-reported cpu_cores over its cores (the /proc
// accounting of its process over the window when it reports none). The
// ramp stops at the first step that is saturated (busy >= SaturatedBusy)
// and gained less than PlateauGain over the previous step, or at the
// ladder's end. The best step is the one with the highest throughput; with
// it saturated, the cap is its throughput per generator core. When no step
// saturated the generator (another process shared its core: Cap.Contended,
// from the generator's own run delay; or the ladder was too short), the cap
// is projected: the best step's messages per generator CPU-second, what a
// core given wholly to the generator would drive at that step's efficiency
// (Cap.Projected; Cap.MeasuredPerS keeps what was driven). The projection
// takes the efficiency of a partly idle generator, which pays a wake-up
// per batch a saturated one does not, so it errs low: the sweep's flag then
// fires early, never late.
//
// # What cannot be calibrated
//
// Only echo has a null sink. fanout's throughput is deliveries of events
// the generator published itself over signed REST and matched by their
// sequence numbers, after a preflight that proves delivery: a sink that
// costs nothing would have to implement the Pusher handshake, REST and the
// fan-out, which is a server. Its receive path's cost per message is what
// `make bench` section 1 measures (a stream of pre-framed messages). The
// scenario files and the NATS scenarios need a protocol server for the
// same reason. Run records each such scenario in Doc.Skipped with the
// reason, and the sweep does not flag its points.
package calibrate

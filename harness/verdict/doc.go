// Package verdict says what limited one measured point of a sweep.
//
// A point is one batch size at one number of connections, measured over
// one window: the generator's report of it (its summary and its evidence
// about itself), and the harness's sampling of both sides' pinned CPUs.
// The harness gathers these into an Outcome; Point turns an Outcome into
// the point the result document records (result.Point), with its verdict:
//
//	server-saturated  the server used its pinned cores
//	generator-capped  the generator fell behind: the throughput is a lower bound
//	both              both at once: also a lower bound
//	neither           neither side near its cores, with a reason (latency- or
//	                  connection-bound, errors, contention, a server that
//	                  does not scale across its cores, an unknown CPU)
//	failed            nothing to judge: the point did not measure
//
// and whether the point is clean, the only kind that can be a ceiling.
//
// # The order of checks
//
// Point asks, in this order, and the first answer that ends a point ends
// it:
//
//  1. Failure. A point the harness could not measure (FailReason), that
//     has no generator result, or whose generator says it could not
//     measure (summary.failure) is failed, with the reason and log tail;
//     its figures are none.
//  2. The generator's summary (MeasuredClean). Errors, an open loop that
//     hit its in-flight limit, fewer connections open than asked for, a
//     connection lost, or no throughput at all: the point stands, but is
//     not clean.
//  3. Contention (result.Contention). Pinned CPUs that other work filled,
//     or that the hypervisor stole, measure the neighbour too: the point
//     is contended and not clean, whatever its verdict.
//  4. The verdict rule (Judge, with Thresholds). The server is saturated
//     when its tree used ServerBusy of its pinned cores; the generator is
//     capped only on evidence that it fell behind (late sends or a rate
//     shortfall in open loop; an event loop that never waited, or load
//     threads that waited for a CPU on busy cores, in closed loop), never
//     on its CPU alone unless it reports no evidence at all. An external
//     server is judged on its metrics' CPU (CPUFromMetrics) and is never
//     saturated when that is unknown. docs/sweep.md, "The verdict rule",
//     gives the rule whole, with the measurements behind each threshold.
//  5. The agents (AGENTS=N). Each agent's own evidence is judged alone:
//     one that fell behind makes the point generator-capped (or both),
//     naming it; one that started its window late and yet kept its
//     schedule had a clock that was off, and fails the point.
//  6. The count check. Where the target names the server's own counter
//     for the scenario, the generator's throughput is set against it over
//     the same window: counts that disagree fail the point (the figure is
//     not the server's); a check that could not be made leaves it not
//     clean.
//  7. The objective (Objective, OBJECTIVE). On a measured point, the
//     service-level objective is evaluated on the generator's summary; a
//     point that misses it, or one where it could not be evaluated, is
//     not its batch's ceiling (result.Summarize decides that).
//
// # Never fail open
//
// What cannot be told is never read as good. An unsampled side is "not
// sampled", not 0%; an external server's unknown CPU is never saturated
// and never quiet, it is said; a generator that reports no evidence and
// whose CPU was not sampled "cannot tell"; a count that could not be
// checked, or an objective that could not be evaluated, leaves the point
// unclean. A point is clean only when every check above had what it needed
// and passed.
//
// # Purity
//
// The package is a function of what a point measured: it starts no
// process, reads no clock, and does no file or network I/O, so every rule
// is tested over recorded measurements (testdata/points.json, TestRecorded
// and the tables beside it). The harness keeps the runtime: it boots,
// pins, samples and stops, fills the Outcome, and hands it here.
package verdict

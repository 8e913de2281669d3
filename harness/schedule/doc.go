// Package schedule decides which point a sweep measures next.
//
// A point is one batch size at one number of connections (a
// result.PointKey: batch, connections, rep), run in a role (sweep, A-A
// repeat, headroom probe, resilience, compare) and, in a two-arm sweep,
// by one arm (base or head). A schedule is the order of a sweep's points
// and the rules that choose the ones that depend on what came before. It
// is given what the points measured so far, as Observed (the point, and
// whether it was lost, failed, good, clean, its throughput, the curve's
// headline), and gives the next point, or says the sweep is done:
//
//	s := schedule.NewSweep(plan)
//	var last []schedule.Observed
//	for {
//		p, more := s.Next(last...)
//		if !more {
//			break
//		}
//		// run p, judge it (harness/verdict), put it in the curve
//		last = []schedule.Observed{what p measured}
//	}
//
// # A single-target sweep (Sweep)
//
// Its phases, in order:
//
//  1. Measure. The ladder: every rung of every batch's connection ladder
//     in Order, interleaved (one rung of each batch in turn, reps the
//     outer loop), whatever each measured. Or SEARCH=bisect: per batch
//     and rep, a search between the ladder's lowest and top rung that
//     reads each point before choosing the next (search.go: bracket x4,
//     then bisection in log space towards the peak, or towards the
//     objective's boundary, within SearchBudget), the batches
//     interleaved as on the ladder. Each search point carries its step,
//     phase and reason; Notes sum up how each search ended.
//  2. The A-A repeat: the headline's rung once more (rep REPS), when the
//     headline is clean. Its spread from the peak is the noise floor.
//  3. The headroom probe (HEADROOM_PROBE): the same rung again (rep
//     REPS+1), the generator's CPU capped by the harness.
//  4. The resilience point (FAULT): the headline's rung, or without one
//     the headline batch's top rung, at the rep after every other there
//     (ResilienceKey).
//
// # A two-arm sweep (TwoArm)
//
// A step machine: Next takes what the last step did (Report: a block's
// points as observed, or the arms' boots and stops, and the run's clock)
// and gives the next Step: a block (the two arms at one key, in the
// order they run, or in a duet on the two halves at once), the boot or
// the stop of warm arms' servers, or Done. A test drives whole
// comparisons through it with made-up times (warm_test.go: a server that
// boots in 2 s and stops in 4 s).
//
// With Scope result.ScopeHeadline (COMPARE_SCOPE's default):
//
//  1. First pass: a search on the headline batch's ladder restricted to
//     its rungs (newRungSearcher: bracket, then bisection, as SEARCH=
//     bisect, reading the mean of both arms), both arms at each rung it
//     picks, the arm that goes first alternating; then HeadlineRung
//     picks the rung (the arms' ceiling rung when they agree, else
//     Prefer, else the highest mean where both ran clean), and every
//     other batch runs once per arm there. Where no rung ran clean in
//     both arms only because their CPUs were contended, the best rung
//     runs again (FirstRetries, while the budget still buys the blocks
//     after it) before the batch is given up.
//  2. Compare blocks at that rung only, as below, planned from what the
//     first pass measured (planBlocks: the time left over a block's
//     measured cost), up to MaxBlocks of them, and none that would end
//     past Budget.
//
// With Scope result.ScopeCurve:
//
//  1. First pass: every key of Order once per arm (FirstPassOrder), the
//     arm that goes first alternating.
//  2. The compared rungs: per batch, the rung where both arms ran clean
//     with the highest mean throughput (CompareRungs).
//  3. Compare blocks: one repeat per arm at each compared rung, the
//     rungs round-robin, each rung's blocks in ABBA order
//     (CompareSchedule, while nothing is lost); a block that lost a
//     repeat runs again, up to MaxBlocks, and a sequential rule
//     (COMPARE_STOP, the paired signed-rank test of internal/stats) may
//     stop a rung early.
//
// How the arms run their servers (Arms, COMPARE_ARMS; costs.go): fresh,
// a server booted and stopped by every point, or warm, each arm's
// servers booted once (BootArms), frozen between its points, stopped and
// booted afresh after the first pass (which times their stop) and every
// RebootEvery blocks, and stopped at the end (StopArms). ArmsAuto
// decides from each arm's ready and stop (Costs): known before the run,
// or timed by the first block, which boots its own servers; warm where
// that buys WarmGain times the blocks. Every cost the plan uses is
// measured as the run goes (costBook), and a budget that the costs show
// cannot buy the blocks the paired test needs ends the run as soon as
// that is known, saying what budget would. Why each rung's blocks ended
// is a result.Ended (Ended), which the terminal, the comment and the
// site show.
//
// # Purity
//
// A schedule starts no process, reads no clock, does no I/O and takes no
// context: what a point measured is all it reads, so every rule is tested
// by tables of Next without a runner. The harness keeps the runtime: it
// stops asking when its context ends, runs each point (PointRunner),
// judges it, writes the progress lines and the curve. Which half of a
// duet a point runs on, and the gate that starts both at once, are the
// harness's too: the first point of a block takes half a.
package schedule

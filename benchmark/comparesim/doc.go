// Command comparesim measures how the two-arm comparison's decision rules
// behave on this machine's real noise and drift: their false-alarm rate,
// their power against planted regressions, the smallest change they
// report they could detect, and what they cost in blocks. It reads A/A
// two-arm documents (`ceiling sweep --base-target`, base and head the
// same server), resamples their recorded blocks into synthetic
// comparisons and judges each with every rule.
//
// Rerun it on the recorded documents with
//
//	go run ./benchmark/comparesim benchmark/comparesim/testdata/*.json
//
// and -common-mode to add the duet model (below); -h lists the flags.
// The report is Markdown on stdout; it is the same for the same files and
// flags (-seed has a fixed default).
//
// # Input
//
// From each document, per compared (batch, connections): the compare
// repeats paired into blocks by rep, in the order the blocks ran
// (result.Blocks), keeping a block when both its repeats have status ok
// and a positive throughput. Contended or otherwise unclean repeats are
// kept on purpose: the harness would re-run such a block, but the drift
// and disturbance they record is what the rules must be judged against.
// A sequence with fewer than -min-blocks blocks is ignored.
//
// # Resampling
//
// Each trial draws a start uniformly over all usable blocks (so a sequence
// is picked in proportion to its length) and takes n consecutive blocks
// from it, wrapping from the sequence's end to its start; the sequential
// rules take up to -max blocks from the same start. Every shift and every
// rule is judged on the same draws, so the rules' differences are not
// differences between draws.
//
//   - Contiguous windows keep the drift. A drift is a correlation in
//     time: blocks near each other run on a machine in a similar state.
//     Resampling single blocks independently (an ordinary bootstrap)
//     would scatter a slow trend over every comparison as if it were
//     independent noise, which flatters the pooled Mann-Whitney test and
//     hides exactly what the paired test is for. A run of consecutive
//     blocks keeps the drift that a real comparison of n blocks would
//     meet. The windows are circular (the circular block bootstrap of
//     Politis and Romano) so every block is equally likely to be used;
//     the price is one artificial seam per sequence, where its end joins
//     its start, and a window across it sees a jump the machine never
//     made. A sequence shorter than a window reuses its own blocks; the
//     command warns.
//   - Swapping the arms is valid under A/A. When base and head are the
//     same server, which of a block's two runs is called base is an
//     accident of the ABBA order, so (base, head) and (head, base) are
//     equally likely outcomes of the same machine. Swapping every block of
//     a window with probability 1/2 doubles the distinct windows and
//     removes any small systematic difference between the two recorded
//     arms (a residual order effect, a port, a CPU) from the A/A baseline.
//     It would be wrong for an A/B recording, whose arms are not
//     exchangeable: the command flags a sequence whose arms differ
//     (paired p < alpha over all its blocks).
//   - Planting a multiplicative shift: head *= 1 - s, at s = 0 (false
//     alarms), 3%, 5%, 10% and 20%. This assumes a regression scales every
//     run of the head by the same factor, whatever the machine's state:
//     the log ratio moves by a constant and its noise is unchanged. A real
//     regression may instead interact with the disturbance (a CPU-bound
//     slowdown matters less when the run was limited by something else),
//     and may add noise of its own; neither is modelled.
//
// The false-alarm interval (Wilson, 95%) counts the trials as
// independent, which they are only as draws: they come from at most twice
// as many distinct windows as there are blocks, and overlapping windows
// share blocks. It is the resampling's error; the report also says how
// many non-overlapping windows the recording holds, which bounds what it
// can tell. Power calls are those that say the head is slower; calls the
// wrong way are counted separately.
//
// # Rules
//
//   - mw+spread, the rule before the paired one: stats.MannWhitneyU on the
//     pooled arms, p < alpha, and |median(head)/median(base) - 1| beyond
//     the larger stats.RelSpreadPct of the arms.
//   - mw: the U test alone.
//   - paired, the harness's rule: stats.SignedRank of stats.LogRatios
//     over the n blocks.
//   - paired+seq and paired+seq-pocock: group-sequential, looking at 6, 7,
//     ..., -max blocks with the levels of stats.SequentialLevels (SpendOBF
//     and SpendPocock), stopping at the first look whose p is below its
//     level; no call at -max.
//
// Each rule's minimum detectable change is stats.PairedMDC of the log
// ratios it used (stats.UnpairedMDC of the log values for the U rules), at
// alpha and 80% power, as a percentage; the report gives its median over
// the shift-0 trials (a planted shift moves all log values of an arm
// alike, so it does not change the noise the MDC reads). The wall-time
// ratio is blocks used over n: a block costs the same whichever rule
// reads it.
//
// # The common-mode model
//
// Duet benchmarking (Bulej et al., ICPE 2020) runs both arms at the same
// time, so that a disturbance hits both and cancels in their ratio; the
// harness interleaves them instead (back-to-back runs share only what
// changes more slowly than a run). -common-mode splits, per sequence, a
// run's variation into a slow part, shared by neighbouring blocks and
// cancelled by any pair, and a fast part, and estimates rho1, the
// correlation of a block's two runs' fast parts: the share back-to-back
// runs already cancel. Both come from two contrasts that need no estimate
// of the slow level, the pair's log ratio and a block's level against its
// neighbours' (see decompose), assuming the fast parts of different
// blocks independent and the slow level locally linear; it is an
// estimate, noisy from a few dozen blocks. A duet pair would share a
// fraction c >= rho1 of the fast part (if a disturbance's correlation
// does not grow with the time gap), and its log ratio's spread would be
// sqrt((1-c)/(1-rho1)) times the recorded one. That much follows from the
// data; c does not. A disturbance shorter than one run and a run's own
// noise look alike in sequential recordings, so c is assumed (0.5 and
// 0.9) and the rows say what a duet would give if it held. The model
// cannot show what running both arms at once costs (shared cores,
// caches, memory bandwidth; each arm on half the machine, a different
// operating point; disturbances that hit the arms unequally), and no
// duet could be measured here: this machine has two cores, too few for
// two servers and two generators at once.
package main

// Package profdiff says where a slower head spends its extra CPU: it
// compares the CPU profiles of a two-arm sweep's base and head, taken over
// the same kind of blocks, per message the server handled.
//
// It is pure: text in (what `perf script` printed, folded stacks), figures
// and an SVG out. Who records the profiles and runs `perf script` is the
// harness's business (harness/cpuprof); this package opens no file, starts
// no process and reads no clock (TestProfdiffIsPure).
//
// # The layers
//
//  1. ParsePerfScript reads `perf script` output (its default fields, or
//     any -F list that keeps period, ip, sym and dso) into a Profile: its
//     stacks folded root first, as Brendan Gregg's stackcollapse-perf
//     folds them ("main;serve;handle;spin"), each with its samples and
//     the CPU nanoseconds their periods add up to, and the samples whose
//     leaf frame has no symbol (Unsymbolised). A frame without a symbol
//     is named by its object ("[node]"), or "[unknown]". ParseFolded and
//     WriteFolded read and write the folded form ("stack samples" lines),
//     which Gregg's flamegraph.pl and difffolded.pl read too.
//  2. A Block is one profiled point: its Profile and the messages the
//     server handled while it was recorded. Costs turns it into each
//     function's self and inclusive CPU per message (a function counted
//     once per stack however often it recurses). Per message, not per
//     sample: a head that handles fewer messages in the same window would
//     otherwise look cheaper everywhere, and a longer window dearer.
//  3. Compare takes several blocks per arm and ranks functions by the
//     growth of their cost per message from base to head (the rank,
//     below). Each frame says whether its change is beyond the
//     block-to-block spread (the rule, below) and how large a change it
//     would have needed to be.
//  4. FlameGraph draws the differential flame graph as a static SVG:
//     a frame's width is the mean of its base and head cost per message
//     (so a frame that vanished or appeared still shows), its colour its
//     own (self) change, red where it grew, blue where it shrank, as
//     Gregg's differential flame graphs colour them. No script, no link,
//     every name escaped: function names come from a pull request's code.
//
// # The rule: larger than the block-to-block spread
//
// A frame is listed as grown (or shrunk) only when all three hold:
//
//   - every head block's cost per message is above every base block's
//     (below, for shrunk): the two arms' ranges do not overlap;
//   - the difference of the arms' mean log costs is beyond
//     z = Φ⁻¹(1 − α/2m) standard errors, α = 0.05 for the whole list and m
//     the frames tested (Bonferroni: one A/A run lists any frame at all
//     with probability at most α);
//   - the change is at least MinSharePct (1%) of the base's whole CPU per
//     message: a frame that moves the whole by less cannot explain a
//     verdict of a few percent, and small frames are where a log cost's
//     normal approximation is weakest (a frame seen 5 times a block in one
//     arm and never in the other passed the first two in one of ten A/A
//     splits of six recorded blocks).
//
// The standard error comes from the blocks: each arm's variance of the
// frame's log cost (ln((ns + half a sample) / messages): a frame absent
// from a block costs half a sample, not log 0), over its blocks. With a
// few blocks per arm one frame's own variance is too rough to stand alone
// (over 3 blocks it has 2 degrees of freedom, and one time in ten it is
// below a tenth of the truth), so it is floored by a model: the counting
// noise of the samples the frame would have in each block if both arms
// cost the same, at its mean cost over the two (a Poisson count n has
// variance n, so its log about 1/n), plus the block-to-block variance the
// frames of the arm share beyond counting (the median, over the frames
// with at least 10 samples a block, of their variance less their own
// counting noise: a whole block that ran slower moves every frame). A
// frame uses the larger of its own variance and the model's, so a frame
// burstier than the rest (a GC cycle that lands in one block and not the
// next) keeps its own spread. With one block per arm there is no spread:
// frames are ranked and marked untested.
//
// # The rank
//
// Frames are ranked by their inclusive cost per message (a frame counts
// wherever it is on the stack), by Score: the change times the share of
// the frame's cost that it is (Change·|Change| / the larger arm's cost).
// The absolute change alone would put every caller of a slower function
// above it (each grows by as much, plus its own noise); the relative
// change alone would put a frame of three samples above one of three
// thousand. Their product peaks at the function nearest the change: its
// callers' growth is diluted by their other work, its unchanged callees
// do not move, and the callees it brought with it (a new call's whole
// subtree) are no larger. Self costs are reported beside the inclusive.
//
// Each frame carries Detectable: the change of its cost per message that
// the rule would have listed, what the run could have seen as well as
// what it found.
package profdiff

// Command changesim measures how `ceiling history --changes` finds a
// change in a published history, beside the two simpler rules a reader
// could use instead: the history table's `*` and a fixed 5% ratio. It
// builds 60-entry histories from recorded A/A runs, plants steps and a
// slope in them, runs every rule on every history and tabulates each
// rule's recall, precision, false alarms and position error.
//
// Rerun it on the recorded documents with
//
//	go run ./benchmark/changesim benchmark/comparesim/testdata/aa-{quiet,drift,5s-calm}.json
//
// -h lists the flags. The report is Markdown on stdout, the same for the
// same files and flags: every random draw comes from a PCG seeded by the
// history's seed and the file's name.
//
// # Input
//
// From each A/A two-arm document (`ceiling sweep --base-target`, base
// and head the same server): the throughput of every clean compare repeat
// at the comparison's headline point, both arms pooled, in run order.
//
//   - Clean only. A published headline is a clean point
//     (result.Result.Summarize takes no other), so a contended run's dip
//     is noise no history entry could carry.
//   - Both arms pooled: under A/A, which arm a run belongs to says
//     nothing about its throughput.
//
// A document with fewer than 10 clean runs there is refused: resampling
// a handful of values shows their accidents, not the machine's noise.
//
// # Histories
//
// A history is 60 entries of one series in one regime, as `ceiling
// publish commit` appends them, oldest first. Each entry stands for one
// published sweep:
//
//   - Its headline is the highest of k runs drawn with replacement from
//     the recording (-k 3, -stat max). What a sweep publishes as its
//     headline (result.Headline, which publish.EntryOf copies) is the
//     highest clean point of the headline batch: one run per rung and
//     rep, the best of them. It is not a mean or a median of repeats, and
//     the A-A repeat is no part of it. The default batch-10 ladder has five
//     rungs, and on a saturated server the rungs past the knee measure
//     the same plateau, so the headline is the best of the few runs on
//     it. Three is an assumption about how many, not a measurement, and
//     drawing them all from one rung's runs assumes the plateau flat.
//     -k 1 is a one-rung ladder at REPS=1 (as the recordings' own first
//     pass); -stat mean is a headline averaged over k repeats, which the
//     harness does not publish but a reader may expect.
//   - Its A-A noise floor is what the harness would have recorded: the
//     headline's point run once more, |repeat − headline| / headline, the
//     repeat one more drawn run (-floor aa; result.NoiseFloorPct). The
//     recordings carry no noise_floor_pct of their own (a two-arm sweep
//     runs no A-A repeat), so none is read from them. -floor spread gives
//     every entry the recording's spread (MAD/median) instead.
//   - Entries are independent draws. Published runs are days apart, and
//     a recording's drift over its minutes is taken as part of the
//     spread between them; no trend across entries is modelled but the
//     one planted. Drawing with replacement from some 80 runs repeats
//     values, so a few entries can be more alike than real runs would be.
//
// # Scenarios
//
// A/A (nothing planted); steps of −3, −5, −10 and −20%; a slope of −2%
// per entry over 5 entries (−10% in all); a step of +10% (an improvement
// is a change too). A step multiplies every headline from its entry on; a
// slope reaches its full change over 5 entries and stays there; a floor
// is a ratio, so no change moves it. The change is planted at an entry
// drawn uniformly from [10, 50], so that at least 10 entries lie on each
// side: a miss is the rule's, not the history's. A seed gives the same
// noise and the same position to every scenario of a recording, so the
// rows differ only in what was planted.
//
// # Rules
//
// Each runs through the product's own code where it has one:
//
//   - changes: publish.Changes, as `ceiling history --changes` runs it
//     (changepoint.DetectFloored with changepoint.Defaults, the least
//     change the median A-A floor of the history's entries and of the
//     entries on each side of it). Its parameters were fixed before this
//     command existed, and the rule of each side's floor before its run
//     of 2026-12-05 (docs/report.md says what it was chosen on); it does
//     not tune them.
//   - floor *: publish.RowChanges, the history table's `*`: an entry that
//     moved against the previous one beyond both entries' floors.
//   - 5% ratio: an entry that differs from the previous one by more than
//     5%, either way, whatever the floors: github-action-benchmark's kind
//     of rule (a fixed alert threshold against the previous entry), taken
//     two-sided as the other two are.
//
// # Scores
//
// A detection is the entry a rule flags as the first after a change. It
// finds the true change when it lies within 2 entries of it (of any of
// a slope's entries); the nearest such detection counts, once. Recall is
// the share of histories whose change was found; precision the
// detections that found a change over all detections (a second flag on
// the same change counts as a false one: it is a second alarm); false
// alarms per history are the detections that found nothing (on A/A,
// every detection); the position error is the median distance, in
// entries, from the detection that found a change to it (0 anywhere
// inside a slope).
package main

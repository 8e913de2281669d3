// Package harness runs `ceiling sweep`: it finds a WebSocket server's
// throughput ceiling by the method of the published ceiling.
//
// For every point (batch size x connections) a dedicated server is booted
// pinned to the server CPUs (supervise, pinning), the generator — `ceiling
// load` or any GENERATOR honouring its flags and JSON — runs pinned to its
// own CPUs, and from the moment it creates its measure marker until its
// window ends both sides are sampled: each process tree's CPU (cpusample)
// and how busy the pinned CPUs were with anything at all (/proc/stat), so
// a core shared with other work is seen. Each point then gets a verdict
// (package harness/verdict): server-saturated, generator-capped (a lower bound), both,
// neither, or failed. The generator-capped call needs evidence that the
// generator fell behind — its load threads waiting for a CPU, an event loop
// that never waits, late sends, a missed rate — not its CPU alone, since an eager reader on loopback is busy
// because it keeps up.
//
// The pieces, each small and tested on its own:
//
//   - Plan (plan.go, resolve.go): the knobs (package harness/knob) in
//     three layers (DefaultOptions, ApplyEnv for the make variables, the
//     CLI's flags), then Resolve turns them into an immutable Plan once,
//     before anything boots: CPU sets picked for the cores present, the
//     target files read once each with the flag overrides and the
//     scenario's defaults, the secrets gathered, every knob validated,
//     and a note for each default that is not the knob table's. The Plan
//     holds the knobs split by reader (knob.Groups: CPUs, Schedule,
//     Point, Compare, Fault, Agents, Files), never knob.Options. Run only
//     reads the Plan; what the run finds goes into the Result.
//   - Knobs (package harness/knob): Options, the ladders and one table of
//     every knob — variable, flag, default, help, parse and check.
//     ApplyEnv, the CLI's flags and usage, Resolve's per-knob checks and
//     the docs' knob tables all read it, so a knob is named in one place.
//   - Targets (package harness/target): the target file, its blocks,
//     placeholders and secrets.
//   - Schedules (package harness/schedule, pure): which point runs next.
//     Order, the interleaved point order (round-robin over batch sizes),
//     so a slow stretch of the machine does not read as the effect of one
//     batch size; then the A-A repeat, the headroom probe, the resilience
//     point; the two-arm first pass and compare blocks. Sweep and
//     SweepTwoArm ask Next, run the point, admit it and feed it back.
//   - SEARCH=bisect (schedule/search.go): in place of the full ladder, a search
//     per batch between the ladder's ends (bracket x4, then bisect in log
//     space) that measures a third of a fine ladder's points or fewer and
//     leaves every rule to Summarize; each point records its step.
//   - PointRunner: one point in, one verdict.Outcome out. ProcRunner is
//     the real one; Sweep drives any runner, repeats the headline peak at
//     the end (A-A), turns each outcome into its curve point with
//     verdict.Point (pure: what a point measured in, its verdict out) and
//     fills the Result. A point is one pipeline (point.go: boot, start
//     the generator side, wait for its marker, measure the window,
//     collect, stop) whose generator side is a strategy (genside.go):
//     the one generator process, or AGENTS' coordinator and agents
//     (package harness/agentside).
//   - Result.Summarize: the per-batch ceilings (highest clean point), the
//     headline, the noise floor and the warnings, from the curve alone, so
//     a partial curve (SIGINT) summarizes the same way.
//   - outfile.Write, result.WriteTable: the JSON written whole and moved
//     into place (never a truncated tracked file, never a -dirty ref
//     because of the run), and the text table with lower bounds marked
//     ">=".
//   - secrets.Gather, RedactResult, secrets.RedactFile (package
//     harness/secrets, internal/redact): every secret the sweep knows,
//     masked in everything it writes — the result, stdout, stderr and
//     each point's files once the point ends.
//   - outfile.Check, outfile.WriteOrSave (package harness/outfile): OUT
//     is checked before boot, rewritten as this run's partial document
//     before every point (a SIGKILLed run never leaves an old OUT looking
//     complete), and saved in the work dir when the final write fails.
//   - SweepTwoArm (twoarm.go) and DecideComparison (compare.go): base and
//     head in one run — a short first pass over both arms' ladders, then
//     COMPARE_REPS repeats per arm at each batch's ceiling rung, arms in
//     ABBA order — and the verdict of head against base (Mann-Whitney U,
//     spread, lower bounds; the headline gates). docs/compare.md.
//   - Calibration (calibration.go): CALIBRATE=1 runs package calibrate
//     before the first point, CALIBRATION=FILE reads a saved document;
//     either lands in meta.calibration, and Summarize marks a point within
//     calibrate.NearCapPct of its batch's cap (x the generator's cores) as
//     near the generator's cap: a warning, never a verdict.
//
// Run(ctx, plan, RunConfig) ties them together for the CLI; RunConfig
// holds what is not a knob (where to write, the agents' network). docs/sweep.md is the user's guide.
package harness

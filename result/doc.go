// Package result is the result document that `ceiling sweep --out`
// writes and `ceiling publish` reads: its types, and the pure functions
// over them that both sides need.
//
// It holds data and derivations, nothing that measures:
//
//   - the document: Result, its Meta, Config and Curve of Points, the
//     verdict, role, arm and status words, and SchemaVersion;
//   - Summarize: the ceilings, the headline, the A-A noise floor, the
//     headroom probe's conclusion and the warnings, from the curve alone;
//   - DecideComparison: a two-arm sweep's verdict, the paired signed-rank
//     test over ABBA blocks (docs/compare.md), built on internal/stats;
//   - Contention and Contenders: which points ran on shared CPUs, and who
//     shared them, from each point's recorded attribution;
//   - the formats (FormatRate, FormatLatency, ComparedLine,
//     WriteComparison) and RedactResult.
//
// The harness fills a Result point by point and calls Summarize; the
// publisher reads one back, checks it against the schema, and may call
// Summarize and DecideComparison again to check what it derived. Neither
// direction needs the other's machinery: publish does not link the
// harness, its supervisor, its agents or gopsutil
// (TestPublishDoesNotImportTheHarness).
package result

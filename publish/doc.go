// Package publish turns a sweep document (result.Result, what `ceiling
// sweep --out` writes) into something other people see: a commit on the
// main branch (Commit) or one pull-request comment comparing a head run with
// its baseline (Compare, Render, Poster).
//
// Design, in the order things happen:
//
//   - Read validates before anything else. The document is checked against
//     the committed JSON Schema (publish/schema/sweep.schema.json, the same
//     file, embedded) for presence and types, then in Go for the rules a
//     schema cannot say (the headline batch is in the batch ladder, ...).
//     Every problem names its field path; unknown fields are tolerated so
//     that a newer sweep stays publishable.
//   - Commit never touches the working tree or the current branch: it
//     builds the commit with plumbing (a private index file, hash-object,
//     commit-tree) on top of the remote branch it just fetched, and pushes
//     that. When another push lands first, it fetches and re-applies the
//     change on the new tip, a bounded number of times. Re-applying (rather
//     than replaying a diff) is what makes the history append safe: the
//     history file is re-read from the new tip and an entry for a measured
//     commit replaces an older entry for the same commit, so nothing is
//     lost and nothing is duplicated. The history keeps the newest
//     DefaultHistoryMax entries.
//   - Compare decides; Render only formats. A head document from a
//     two-arm sweep (both arms measured in one job, interleaved and
//     repeated) carries its own comparison: Compare re-derives it from the
//     curve with result.DecideComparison, the harness's own rule, and
//     refuses a document whose comparison differs (ComparisonError; Read
//     refuses it too). Only that mode calls faster or slower, and only the
//     headline gates (FailOn, `--fail-on slower`). Without one, a baseline
//     published by another run is the fallback: runner variance is not in
//     its single A-A figure, so a change inside the larger floor is within
//     noise and anything beyond it cannot conclude, with a caution at the
//     top saying why. Whatever weakens a comparison (lower bounds, too few
//     samples, a baseline that fell back, different machines or regimes,
//     an interrupted run) becomes an Alert, which Render puts at the top.
//   - Render writes the verdict in words as the first line, then the
//     alerts as GitHub alert blocks, the table, and a mermaid xychart
//     built from numbers only, its colours set in the diagram (chart.go).
//     Every string that came from a run or a pull request is escaped
//     (Markdown, HTML, mentions, autolinks); figures keep a non-breaking
//     space before their unit so table cells never wrap inside a number.
//   - Poster finds the one comment carrying the hidden marker across every
//     page of comments, edits it or creates it, waits out GitHub's rate
//     limits a bounded number of times, and reports a missing permission
//     (403, the read-only token of a fork pull request) as ErrNoPermission
//     so the caller can fall back to the job summary. The token never
//     appears in an error: every message from the API is redacted.
package publish

// Package publish turns a sweep document (harness.Result, what `ceiling
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
//   - Compare decides per batch size, with the larger of the two runs' A-A
//     noise floors as the threshold: a change inside it is "~", never a
//     regression; a side that is a lower bound (generator-capped) or a run
//     without a floor makes the row "cannot conclude".
//   - Render writes Markdown in which every string that came from a run or
//     a pull request is escaped (Markdown, HTML, mentions, autolinks), and
//     whose only chart is a mermaid xychart built from numbers.
//   - Poster finds the one comment carrying the hidden marker across every
//     page of comments, edits it or creates it, waits out GitHub's rate
//     limits a bounded number of times, and reports a missing permission
//     (403, the read-only token of a fork pull request) as ErrNoPermission
//     so the caller can fall back to the job summary. The token never
//     appears in an error: every message from the API is redacted.
package publish

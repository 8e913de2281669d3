// Package outfile writes the result document to OUT, and says before
// anything boots when it could not.
//
// A result is read, committed and compared: whoever reads OUT must never
// see half a document, nor an earlier run's document passing for this
// one, nor a work tree the run itself made dirty. So:
//
//   - Check, before the first point: OUT is no directory, and the nearest
//     existing directory on its way takes a new file (tried, not read off
//     the mode bits: root ignores those, /proc and read-only mounts do
//     not). It creates nothing that stays.
//   - Write (WriteFile for any bytes): the whole document goes to a
//     temporary file, synced and renamed over OUT (internal/atomicfile).
//     Inside a git work tree the temporary file is made in os.TempDir,
//     never beside OUT, so a run in flight leaves the tree as it was (no
//     truncated tracked file, no stray file, no -dirty git ref); where
//     os.TempDir is on another filesystem, so that the rename cannot
//     work, the finished bytes go to a hidden file beside OUT in one
//     write and are renamed from there.
//   - WriteOrSave, at the end: OUT or, when that fails, the first
//     fallback that takes the document, with an *Error that says where it
//     went (or that it is lost). A sweep's result is not lost because OUT
//     went away during it.
//
// The harness also rewrites OUT through Write before every point, as the
// run's partial document, so a harness killed outright leaves a document
// that says it did not finish. Every error names OUT, the knob.
//
// The package knows the document's type (package result) and files, and
// nothing of a sweep: it never links what boots, measures or judges a
// point (TestOutfileWritesOnly).
package outfile

package publish

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/result"
)

// SummaryMarker is the hidden marker of a job summary (a summary is never
// found again, but Render wants one).
const SummaryMarker = "ceiling:summary"

// Summary is the job summary of one run (`ceiling sweep`, `ceiling
// publish commit`): a heading, then the run as the comment renders it, its
// table and its mermaid chart. A two-arm run shows its own comparison; a
// single-arm run shows itself alone, with nothing compared. heading is
// escaped.
func Summary(r *result.Result, heading string) (string, error) {
	c, err := Compare(nil, r, CompareOptions{BaseMissing: "a job summary shows one run", HeadName: "result", Alone: true})
	if err != nil {
		return "", err
	}
	return "### " + text(heading) + "\n\n" + Render(c, RenderOptions{Marker: SummaryMarker}), nil
}

// MaxSummaryBytes is GitHub's limit on one step's job summary: a larger
// one is not shown at all. Appends are cut to fit it, as a comment is cut
// to MaxCommentLen.
const MaxSummaryBytes = 1 << 20

// summaryCut ends a summary that was cut to fit MaxSummaryBytes.
const summaryCut = "\n\n*(cut here: the job summary reached GitHub's 1 MiB limit; the result file has the whole run)*\n"

// AppendSummary appends md to the job summary file (GITHUB_STEP_SUMMARY);
// nothing when path is empty. What would take the file past
// MaxSummaryBytes is cut at a line's end and says so; an append that
// finds no room for that note writes nothing.
func AppendSummary(path, md string) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	_, werr := io.WriteString(f, fitSummary(md+"\n", MaxSummaryBytes-size))
	return errors.Join(werr, f.Close())
}

// fitSummary is md if it fits in room bytes, else its first lines that
// fit beside the note that it was cut, and the note ("" when not even the
// note fits).
func fitSummary(md string, room int64) string {
	if int64(len(md)) <= room {
		return md
	}
	keep := room - int64(len(summaryCut))
	if keep < 0 {
		return ""
	}
	head := md[:keep]
	if i := strings.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	} else {
		head = ""
	}
	return head + summaryCut
}

// WriteSummary renders r's summary and appends it to path, for a command
// whose main work is done: a failure is a warning on w, never an error.
// With secrets, r is redacted in place before it is rendered (the
// Markdown escapes punctuation, so a secret could no longer be found in
// it afterwards), and the Markdown passes through them again.
func WriteSummary(w io.Writer, path string, r *result.Result, heading string, secrets *redact.Set) {
	WriteSummaryLed(w, path, "", r, heading, secrets)
}

// WriteSummaryLed is WriteSummary with lead (Markdown of ours, e.g.
// ChangeSummary) before the run: what the summary must open with.
func WriteSummaryLed(w io.Writer, path, lead string, r *result.Result, heading string, secrets *redact.Set) {
	if path == "" || r == nil {
		return
	}
	if secrets != nil {
		result.RedactResult(r, secrets)
	}
	md, err := Summary(r, heading)
	md = lead + md
	if err == nil && secrets != nil {
		md = secrets.String(md)
	}
	if err == nil {
		err = AppendSummary(path, md)
	}
	if err != nil {
		fmt.Fprintf(w, "ceiling: job summary %s not written: %v\n", path, err)
	}
}

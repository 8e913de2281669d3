package publish

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestStripLogTails: every "log_tail" member goes, wherever it stands in
// its object (first, middle, last, alone); every other byte stays.
func TestStripLogTails(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{`{"curve": [{"x": 1, "log_tail": "s3cret\nline", "y": [2]}]}`, `{"curve": [{"x": 1, "y": [2]}]}`},
		{`{"curve": [{"log_tail": "t", "x": 1}]}`, `{"curve": [{ "x": 1}]}`},
		{"{\n  \"curve\": [\n    {\n      \"x\": 1,\n      \"log_tail\": \"t\"\n    }\n  ]\n}", "{\n  \"curve\": [\n    {\n      \"x\": 1\n    }\n  ]\n}"},
		{`{"p": {"log_tail": "only"}, "q": [{"log_tail": {"nested": "log_tail"}}, "log_tail"]}`, `{"p": {}, "q": [{}, "log_tail"]}`},
		{`{"note": "the text \"log_tail\": stays", "log_tail": "x"}`, `{"note": "the text \"log_tail\": stays"}`},
	} {
		got, n, err := StripLogTails([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("StripLogTails(%s) = %s, %d, %v; want %s", c.in, got, n, err, c.want)
		}
		if !json.Valid(got) {
			t.Errorf("%s: not JSON", got)
		}
	}
	if _, _, err := StripLogTails([]byte(`{"a": `)); err == nil {
		t.Error("a cut document: no error")
	}
}

// TestCommitLeavesLogTailsOut: a failed point's server log tail is not in
// the published file unless CommitOptions.LogTails; the rest is the
// result as it was.
func TestCommitLeavesLogTailsOut(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		remote, checkout := newRemote(t)
		r, _ := resultAt(t, refT(t, checkout, "aaaa"), 123456)
		r.Curve[0].LogTail = "server said: the log of a failed point"
		raw, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		out, err := Commit(context.Background(), r, raw, CommitOptions{Repo: checkout, LogTails: keep})
		if err != nil {
			t.Fatal(err)
		}
		got := remoteFile(t, remote, "benchmark/published/ceiling-load.json")
		if has := strings.Contains(got, "the log of a failed point"); has != keep || (out.LogTailsCut == 1) == keep {
			t.Errorf("LogTails %v: published holds the tail %v, cut %d", keep, has, out.LogTailsCut)
		}
		if _, err := Read([]byte(got), "published"); err != nil {
			t.Errorf("LogTails %v: the published file does not read: %v", keep, err)
		}
	}
}

package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// TestCommentWithinGitHubsLimit: a document with 2,000 long warnings
// renders a comment within MaxCommentLen, still leading with the verdict
// and counting the warnings it leaves out, and a GitHub that answers 422
// past the limit (as the API does) takes it.
func TestCommentWithinGitHubsLimit(t *testing.T) {
	t.Parallel()
	r := twoArmBounds(t)
	r.Warnings = nil
	for i := range 2000 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("warning %d: %s", i, strings.Repeat("x", 800)))
	}
	c := mustCompare(t, nil, r, CompareOptions{})
	full := Render(c, RenderOptions{})
	if runeLen(full) <= MaxCommentLen {
		t.Fatalf("the full comment is %d characters: the test tests nothing", runeLen(full))
	}
	md := RenderComment(c, RenderOptions{})
	if n := runeLen(md); n > MaxCommentLen {
		t.Fatalf("comment of %d characters, over %d", n, MaxCommentLen)
	}
	title, verdict := titleAndVerdict(md)
	if !strings.HasPrefix(md, HiddenMarker(Marker(c.Generator))+"\n") || title != outcomeTitle(c) || verdict != strings.SplitN(verdictLine(c), "\n", 2)[0] {
		t.Errorf("the comment does not lead with its marker, the outcome and the verdict:\n%.300s", md)
	}
	if !strings.Contains(md, "and 1980 more warnings") {
		t.Errorf("the comment does not count the warnings it leaves out")
	}

	client, mux, _, _ := setup(t)
	var want atomic.Value // the body the next POST must carry
	want.Store(md)
	mux.HandleFunc("/repos/o/r/issues/7/comments", func(w http.ResponseWriter, req *http.Request) {
		switch req.Method {
		case "GET":
			testEmptyBody(t, req)
			fmt.Fprint(w, "[]")
		case "POST":
			b, _ := io.ReadAll(req.Body)
			var body struct {
				Body string `json:"body"`
			}
			if err := json.Unmarshal(b, &body); err != nil || body.Body != want.Load().(string) {
				t.Errorf("POST body is not the rendered comment (%v)", err)
			}
			if runeLen(body.Body) > MaxCommentLen {
				w.WriteHeader(http.StatusUnprocessableEntity)
				fmt.Fprint(w, `{"message": "Validation Failed", "errors": [{"resource": "IssueComment", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)"}]}`)
				return
			}
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"id": 556, "html_url": "https://github.example/o/r/pull/7#issuecomment-556"}`)
		default:
			testMethod(t, req, "GET or POST")
		}
	})
	if _, err := newPoster(client, &sleeps{}).Upsert(context.Background(), md); err != nil {
		t.Fatalf("Upsert: %v", err)
	}
	// The fake refuses what GitHub refuses: the full body is a 422.
	want.Store(full)
	if _, err := newPoster(client, &sleeps{}).Upsert(context.Background(), full); err == nil {
		t.Error("the fake took a body over the limit: it checks nothing")
	}
}

// TestKeepLines: a prefix within the budget that ends at a line break.
func TestKeepLines(t *testing.T) {
	for _, tt := range []struct {
		s      string
		budget int
		want   string
	}{
		{"a\nb\nc", 10, "a\nb\nc"},
		{"a\nb\nc", 4, "a\nb"},
		{"a\nb\nc", 3, "a"},
		{"a\nb\nc", 2, "a"},
		{"abc", 2, ""},
		{"é\nb", 2, "é"},
		{"abc", -1, ""},
	} {
		if got := keepLines(tt.s, tt.budget); got != tt.want {
			t.Errorf("keepLines(%q, %d) = %q, want %q", tt.s, tt.budget, got, tt.want)
		}
	}
}

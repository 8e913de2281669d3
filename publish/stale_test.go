package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const staleCommit = "0123456789abcdef0123456789abcdef01234567"

var staleNote = StaleNote{Commit: staleCommit, Reason: "bench run failure", RunURL: "https://github.com/o/r/actions/runs/42"}

// wantStaleBody is what the marked comment must become: the alert under the
// marker, then the old body unchanged.
func wantStaleBody(oldRest string) string {
	return "<!-- ceiling:comment generator=ceiling-load -->\n" +
		"<!-- ceiling:stale -->\n" +
		"> [!WARNING]\n" +
		"> **Stale: these numbers are not for the latest push.** The benchmark of 0123456789ab did not produce a result: " +
		"bench run failure ([the run](https://github.com/o/r/actions/runs/42)). The comparison below is from an earlier push; " +
		"the next run that finishes replaces it.\n" +
		"<!-- /ceiling:stale -->\n\n" + oldRest
}

func TestMarkStaleEditsMarkedComment(t *testing.T) {
	t.Parallel()
	const oldRest = "### ceiling · ceiling\\-load: head abc\n\n**Headline** \\*escaped\\* &lt;b&gt;\n"
	client, mux, _, api := setup(t)
	mux.HandleFunc("/repos/o/r/issues/7/comments", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		testEmptyBody(t, r)
		fmt.Fprint(w, comments("LGTM", "<!-- ceiling:comment generator=ceiling-load -->\n"+oldRest, "later"))
	})
	mux.HandleFunc("/repos/o/r/issues/comments/101", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "PATCH")
		testBody(t, r, map[string]any{"body": wantStaleBody(oldRest)})
		fmt.Fprint(w, `{"id": 101, "html_url": "u101"}`)
	})
	got, found, err := newPoster(client, &sleeps{}).MarkStale(context.Background(), staleNote)
	if err != nil || !found {
		t.Fatalf("MarkStale = %v, %v", found, err)
	}
	if diff := cmp.Diff(Posted{ID: 101, URL: "u101"}, got); diff != "" {
		t.Errorf("MarkStale (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"GET /repos/o/r/issues/7/comments?per_page=100", "PATCH /repos/o/r/issues/comments/101"}, api.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// Marking an already stale comment replaces the alert; the comparison
// under it stays. GitHub may hand the body back with CRLF line ends.
func TestMarkStaleReplacesOldAlert(t *testing.T) {
	t.Parallel()
	const oldRest = "### the comparison\r\nrow\r\n"
	oldBody := "<!-- ceiling:comment generator=ceiling-load -->\r\n<!-- ceiling:stale -->\r\n> [!WARNING]\r\n> **Stale** older alert for 1111111\r\n<!-- /ceiling:stale -->\r\n\r\n" + oldRest
	client, mux, _, api := setup(t)
	mux.HandleFunc("/repos/o/r/issues/7/comments", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		testEmptyBody(t, r)
		b, _ := json.Marshal([]map[string]any{{"id": 5, "user": map[string]any{"login": "github-actions[bot]"}, "body": oldBody}})
		w.Write(b)
	})
	mux.HandleFunc("/repos/o/r/issues/comments/5", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "PATCH")
		testBody(t, r, map[string]any{"body": wantStaleBody(oldRest)})
		fmt.Fprint(w, `{"id": 5}`)
	})
	p := newPoster(client, &sleeps{})
	p.Author = "github-actions[bot]"
	if _, found, err := p.MarkStale(context.Background(), staleNote); err != nil || !found {
		t.Fatalf("MarkStale = %v, %v", found, err)
	}
	if n := len(api.requests()); n != 2 {
		t.Errorf("%d requests, want the listing and one edit: %v", n, api.requests())
	}
}

// No marked comment (or only someone else's): nothing to mark, no edit.
func TestMarkStaleNothingToMark(t *testing.T) {
	t.Parallel()
	client, mux, _, api := setup(t)
	mux.HandleFunc("/repos/o/r/issues/7/comments", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		testEmptyBody(t, r)
		fmt.Fprint(w, `[{"id": 1, "user": {"login": "mallory"}, "body": "<!-- ceiling:comment generator=ceiling-load -->\nforged"}]`)
	})
	p := newPoster(client, &sleeps{})
	p.Author = "github-actions[bot]"
	_, found, err := p.MarkStale(context.Background(), staleNote)
	if err != nil || found {
		t.Errorf("MarkStale = found %v, %v; want nothing found", found, err)
	}
	if diff := cmp.Diff([]string{"GET /repos/o/r/issues/7/comments?per_page=100"}, api.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// A bad note is refused before any request, naming the field.
func TestMarkStaleBadNote(t *testing.T) {
	t.Parallel()
	client, _, _, api := setup(t)
	for _, n := range []StaleNote{
		{Commit: ""},
		{Commit: "ABCDEF0"},
		{Commit: "abc"},
		{Commit: "abcdef0; rm"},
		{Commit: "abcdef0", RunURL: "javascript:alert(1)"},
		{Commit: "abcdef0", RunURL: "https://x/a) [click](https://evil"},
		{Commit: "abcdef0", RunURL: "https://"},
	} {
		_, _, err := newPoster(client, &sleeps{}).MarkStale(context.Background(), n)
		var ne *StaleNoteError
		if !errors.As(err, &ne) {
			t.Errorf("MarkStale(%+v) = %v, want a *StaleNoteError", n, err)
		}
	}
	if got := api.requests(); len(got) != 0 {
		t.Errorf("requests made for bad notes: %v", got)
	}
}

// The reason is untrusted text: escaped, one line, no mention.
func TestStaleBodyEscapesReason(t *testing.T) {
	t.Parallel()
	n := StaleNote{Commit: "abcdef0", Reason: "<script>x</script>\n@someone #12 [link](https://evil)"}
	got, err := StaleBody("<!-- m -->\nold", "m", n)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script>", "@someone", "#12", "[link]", "](https"} {
		if strings.Contains(got, bad) {
			t.Errorf("body holds %q unescaped:\n%s", bad, got)
		}
	}
	if !strings.HasSuffix(got, "\n\nold") || strings.Count(got, "\n") != 6 {
		t.Errorf("body:\n%s", got)
	}
	if _, err := StaleBody("no marker here", "m", n); !errors.Is(err, ErrNotMarked) {
		t.Errorf("StaleBody without the marker = %v, want ErrNotMarked", err)
	}
}

// An old body close to GitHub's limit is cut at a line break so that the
// alert fits, and the cut is said.
func TestStaleBodyWithinLimit(t *testing.T) {
	t.Parallel()
	line := strings.Repeat("é", 99) + "\n" // multi-byte: the limit counts characters
	old := "<!-- m -->\n" + strings.Repeat(line, MaxCommentLen/100)
	got, err := StaleBody(old, "m", StaleNote{Commit: "abcdef0"})
	if err != nil {
		t.Fatal(err)
	}
	if n := runeLen(got); n > MaxCommentLen {
		t.Errorf("body of %d characters, over %d", n, MaxCommentLen)
	}
	if !strings.Contains(got, "did not fit in the comment") || !strings.Contains(got, staleClose+"\n\n"+line) {
		t.Errorf("body does not say it was cut, or lost its start: %.300q … %q", got, got[len(got)-200:])
	}
	if rest := got[strings.Index(got, staleClose):]; strings.Contains(strings.TrimSuffix(rest, "\n"), "é\n*") {
		t.Errorf("cut inside a line")
	}
}

func TestMarkStaleFork403(t *testing.T) {
	t.Parallel()
	client, mux, _, _ := setup(t)
	mux.HandleFunc("/repos/o/r/issues/7/comments", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		fmt.Fprint(w, comments("<!-- ceiling:comment generator=ceiling-load -->\nold"))
	})
	mux.HandleFunc("/repos/o/r/issues/comments/100", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "PATCH")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message": "Resource not accessible by integration"}`)
	})
	_, found, err := newPoster(client, &sleeps{}).MarkStale(context.Background(), staleNote)
	if !found || !errors.Is(err, ErrNoPermission) {
		t.Errorf("MarkStale = found %v, %v; want ErrNoPermission", found, err)
	}
}

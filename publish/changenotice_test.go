package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
)

func changeFixture(t *testing.T) []HistoryEntry {
	t.Helper()
	data, err := os.ReadFile("testdata/history_change.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseHistory(data, "history_change.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestNewChangesOnce: replaying the fixture one push at a time, its one
// change point is news at exactly one push (the one whose entry makes it
// detectable), and it is the change point of the whole history.
func TestNewChangesOnce(t *testing.T) {
	h := changeFixture(t)
	want := Changes(h)[0]
	var at []int
	for k := 1; k <= len(h); k++ {
		news := NewChanges(h[:k], h[k-1])
		for _, c := range news {
			if c.key() != want.key() {
				t.Errorf("push %d: news of %+v, not the history's change point", k, c)
			}
		}
		if len(news) > 0 {
			at = append(at, k)
		}
	}
	if len(at) != 1 {
		t.Fatalf("the change point was news at pushes %v, want exactly one", at)
	}
	// It needs 3 entries after it (changepoint.Defaults.MinSegment), and
	// the 13th entry is the first after it.
	if at[0] < 15 {
		t.Errorf("news at push %d, before 3 entries after the change existed", at[0])
	}
	// An entry that is not in the history completes nothing.
	if news := NewChanges(h[:at[0]-1], h[at[0]-1]); news != nil {
		t.Errorf("an entry not in the history: %+v", news)
	}
}

// TestChangeTextsEscape: a hostile series name and commit id reach the
// summary, the comment and the terminal line as text only.
func TestChangeTextsEscape(t *testing.T) {
	h := changeFixture(t)
	c := Changes(h)[0]
	c.Series = "<script>alert(1)</script> @admin #1 [x](javascript:y)"
	c.After.GitRef = "`evil\n<img src=x>"
	md := ChangeSummary([]Change{c}) + RenderChangeComment(c)
	for _, bad := range []string{"<script>", "<img", "@admin", "](javascript", "\n<img"} {
		if strings.Contains(md, bad) {
			t.Errorf("%q unescaped in:\n%s", bad, md)
		}
	}
	if !strings.HasPrefix(RenderChangeComment(c), HiddenMarker(ChangeMarker(c))+"\n") {
		t.Error("the comment does not start with its marker")
	}
	if err := CheckMarker(ChangeMarker(c)); err != nil {
		t.Errorf("the change marker: %v", err)
	}
	line := ChangeLine(c)
	if strings.ContainsAny(line, "\n\x1b") {
		t.Errorf("terminal line %q", line)
	}
	if ChangeSummary(nil) != "" {
		t.Error("a summary lead without a change point")
	}
	if !strings.Contains(ChangeSummary([]Change{c}), "−12.") {
		t.Errorf("the lead does not say the change:\n%s", ChangeSummary([]Change{c}))
	}
}

// TestMainChangeNote: a pull request's base measured after the recent
// change point gets the one line; one measured before it, or a change
// too old, gets none.
func TestMainChangeNote(t *testing.T) {
	h := changeFixture(t)
	series := h[0].Series()
	// Ten entries: the change at the 13th, the base the 16th.
	short := h[:16]
	n, ok := MainChangeNote(short, series, "")
	if !ok || !strings.Contains(n.render(), "main changed −1") || !strings.Contains(n.render(), "3 merges ago") || !strings.Contains(n.render(), shortRef(h[12].GitRef)) {
		t.Errorf("base after the change: %v %q", ok, n.render())
	}
	if _, ok := MainChangeNote(short, series, h[5].GitRef); ok {
		t.Error("a base measured before the change got the line")
	}
	if _, ok := MainChangeNote(h, series, ""); ok {
		t.Errorf("a change %d entries old got the line (RecentChangeEntries %d)", 11, RecentChangeEntries)
	}
	if _, ok := MainChangeNote(short, "another series", ""); ok {
		t.Error("another series got the line")
	}
}

// TestPostChangeOnCommitOnce: the comment is posted on the first commit
// after the change; a second post of the same change point (a re-run
// push) finds its marker and posts nothing.
func TestPostChangeOnCommitOnce(t *testing.T) {
	client, mux, _, api := setup(t)
	c := Changes(changeFixture(t))[0]
	sha := c.After.GitRef
	var posted []string
	mux.HandleFunc("/repos/o/r/commits/"+sha+"/comments", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			var out []map[string]any
			for i, b := range posted {
				out = append(out, map[string]any{"id": 500 + i, "body": b, "user": map[string]any{"login": "github-actions[bot]"}})
			}
			_ = json.NewEncoder(w).Encode(out)
		case http.MethodPost:
			var body struct{ Body string }
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				t.Error(err)
			}
			posted = append(posted, body.Body)
			fmt.Fprintf(w, `{"id":%d,"html_url":"https://example.com/c"}`, 499+len(posted))
		default:
			t.Errorf("%s %s", r.Method, r.URL)
		}
	})
	p := &Poster{Client: client, Owner: "o", Repo: "r", Token: testToken, Author: "github-actions[bot]"}
	for run := range 2 {
		got, err := p.PostChange(context.Background(), ChangeCommentCommit, c)
		if err != nil || got.Created != (run == 0) || got.ID != 500 {
			t.Errorf("run %d: %+v %v", run, got, err)
		}
	}
	if len(posted) != 1 || !strings.HasPrefix(posted[0], HiddenMarker(ChangeMarker(c))) {
		t.Errorf("posted %q, want one comment with the marker", posted)
	}
	want := []string{"GET /repos/o/r/commits/" + sha + "/comments?per_page=100", "POST /repos/o/r/commits/" + sha + "/comments",
		"GET /repos/o/r/commits/" + sha + "/comments?per_page=100"}
	if got := api.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A change whose first entry after measured no commit id is not
	// posted anywhere.
	c.After.GitRef = "main-dirty"
	if _, err := p.PostChange(context.Background(), ChangeCommentCommit, c); err == nil || !strings.Contains(err.Error(), "not a commit id") {
		t.Errorf("a non-commit: %v", err)
	}
}

// TestPostChangeOnIssue: with no open performance issue one is opened,
// and the change point is commented on it once.
func TestPostChangeOnIssue(t *testing.T) {
	client, mux, _, api := setup(t)
	c := Changes(changeFixture(t))[0]
	var issues, posted []string
	mux.HandleFunc("/repos/o/r/issues", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			var out []map[string]any
			for range issues {
				out = append(out, map[string]any{"number": 5, "title": PerformanceIssueTitle})
			}
			_ = json.NewEncoder(w).Encode(out)
		case http.MethodPost:
			testBody(t, r, map[string]any{"title": PerformanceIssueTitle, "labels": []string{PerformanceLabel},
				"body": "Change points found on the published benchmark history by `ceiling publish commit --change-comment issue`, one comment each."})
			issues = append(issues, "5")
			fmt.Fprint(w, `{"number":5}`)
		}
	})
	mux.HandleFunc("/repos/o/r/issues/5/comments", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			var out []map[string]any
			for i, b := range posted {
				out = append(out, map[string]any{"id": 700 + i, "body": b, "user": map[string]any{"login": ActionsBot}})
			}
			_ = json.NewEncoder(w).Encode(out)
		case http.MethodPost:
			var body struct{ Body string }
			_ = json.NewDecoder(r.Body).Decode(&body)
			posted = append(posted, body.Body)
			fmt.Fprint(w, `{"id":700}`)
		}
	})
	p := &Poster{Client: client, Owner: "o", Repo: "r", Token: testToken, Actions: true}
	for run := range 2 {
		got, err := p.PostChange(context.Background(), ChangeCommentIssue, c)
		if err != nil || got.Created != (run == 0) || got.ID != 700 {
			t.Errorf("run %d: %+v %v", run, got, err)
		}
	}
	if len(issues) != 1 || len(posted) != 1 {
		t.Errorf("%d issues opened, %d comments posted; want 1 and 1", len(issues), len(posted))
	}
	list := "GET /repos/o/r/issues?direction=asc&labels=performance&per_page=10&sort=created&state=open"
	want := []string{list, "POST /repos/o/r/issues", "GET /repos/o/r/issues/5/comments?per_page=100", "POST /repos/o/r/issues/5/comments",
		list, "GET /repos/o/r/issues/5/comments?per_page=100"}
	if got := api.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := CheckChangeComment("pr"); err == nil || !strings.Contains(err.Error(), "--change-comment") {
		t.Errorf("a bad --change-comment: %v", err)
	}
}

// TestChangeMarkerCountsOnlyThePostersComments is issue 52's fourth
// failure: a comment of someone else's that starts with the change
// point's marker (a digest of public data) made the poster believe it had
// posted, in both places. Only the token's user's comments count (GET
// /user), or github-actions[bot]'s on Actions; the fake checks every
// request.
func TestChangeMarkerCountsOnlyThePostersComments(t *testing.T) {
	c := Changes(changeFixture(t))[0]
	marker := HiddenMarker(ChangeMarker(c))
	for _, where := range []string{ChangeCommentCommit, ChangeCommentIssue} {
		for _, actions := range []bool{false, true} {
			self := "ceiling-bot"
			if actions {
				self = ActionsBot
			}
			t.Run(fmt.Sprintf("%s actions=%v", where, actions), func(t *testing.T) {
				client, mux, _, api := setup(t)
				type comment struct{ login, body string }
				// Mallory's copy of the marker, then (for the bot) a
				// comment of the token's user's without it.
				comments := []comment{{"mallory", marker + "\nnothing to see"}, {self, "an unrelated comment"}}
				list := func(w http.ResponseWriter, r *http.Request, id int) {
					switch r.Method {
					case http.MethodGet:
						var out []map[string]any
						for i, cm := range comments {
							out = append(out, map[string]any{"id": id + i, "body": cm.body, "user": map[string]any{"login": cm.login}})
						}
						_ = json.NewEncoder(w).Encode(out)
					case http.MethodPost:
						var body struct{ Body string }
						_ = json.NewDecoder(r.Body).Decode(&body)
						comments = append(comments, comment{self, body.Body})
						fmt.Fprintf(w, `{"id":%d}`, id+len(comments)-1)
					default:
						t.Errorf("%s %s", r.Method, r.URL)
					}
				}
				mux.HandleFunc("/repos/o/r/commits/"+c.After.GitRef+"/comments", func(w http.ResponseWriter, r *http.Request) { list(w, r, 500) })
				mux.HandleFunc("/repos/o/r/issues/5/comments", func(w http.ResponseWriter, r *http.Request) { list(w, r, 700) })
				mux.HandleFunc("/repos/o/r/issues", func(w http.ResponseWriter, r *http.Request) {
					testMethod(t, r, http.MethodGet)
					fmt.Fprint(w, `[{"number":5}]`)
				})
				mux.HandleFunc("/user", func(w http.ResponseWriter, r *http.Request) {
					testMethod(t, r, http.MethodGet)
					if actions {
						t.Error("GET /user on Actions: its GITHUB_TOKEN may not read it")
					}
					fmt.Fprintf(w, `{"login":%q}`, self)
				})
				p := &Poster{Client: client, Owner: "o", Repo: "r", Token: testToken, Actions: actions}
				for run := range 2 {
					got, err := p.PostChange(context.Background(), where, c)
					if err != nil || got.Created != (run == 0) {
						t.Errorf("run %d: %+v %v; want posted once, mallory's copy of the marker not counted", run, got, err)
					}
				}
				if len(comments) != 3 || comments[2].login != self || !strings.HasPrefix(comments[2].body, marker) {
					t.Errorf("comments %q, want the change point posted once beside mallory's", comments)
				}
				users := 0
				for _, r := range api.requests() {
					if strings.HasPrefix(r, "GET /user") {
						users++
					}
				}
				if want := map[bool]int{false: 2, true: 0}[actions]; users != want {
					t.Errorf("%d GET /user, want %d: %q", users, want, api.requests())
				}
			})
		}
	}

	// No login known: nothing is posted, and the error says why.
	client, mux, _, _ := setup(t)
	mux.HandleFunc("/user", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"message":"Resource not accessible by integration"}`, http.StatusForbidden)
	})
	p := &Poster{Client: client, Owner: "o", Repo: "r", Token: testToken}
	if _, err := p.PostChange(context.Background(), ChangeCommentCommit, c); err == nil || !strings.Contains(err.Error(), "who posts") {
		t.Errorf("no login: %v, want an error saying who posts is unknown", err)
	}
}

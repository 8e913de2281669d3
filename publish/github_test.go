package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-github/v62/github"
)

// The fake API follows go-github's own tests: a mux under a base path, and
// helpers that check the method and the body of every request.

const (
	baseURLPath = "/api-v3"
	testToken   = "ghs_TESTTOKEN1234567890secret"
)

// fakeAPI records every request that reached it, so a test can say exactly
// which requests it expects.
type fakeAPI struct {
	mu   sync.Mutex
	seen []string
}

func (f *fakeAPI) record(r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := r.Method + " " + r.URL.Path
	if r.URL.RawQuery != "" {
		s += "?" + r.URL.RawQuery
	}
	f.seen = append(f.seen, s)
}

func (f *fakeAPI) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// setup starts the fake API. Handlers registered on mux see paths without
// the base path; anything unregistered fails the test.
func setup(t *testing.T) (client *github.Client, mux *http.ServeMux, serverURL string, api *fakeAPI) {
	t.Helper()
	mux = http.NewServeMux()
	api = &fakeAPI{}
	apiHandler := http.NewServeMux()
	apiHandler.Handle(baseURLPath+"/", http.StripPrefix(baseURLPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.record(r)
		if got, want := r.Header.Get("Authorization"), "Bearer "+testToken; got != want {
			t.Errorf("%s %s: Authorization = %q, want the token", r.Method, r.URL.Path, got)
		}
		mux.ServeHTTP(w, r)
	})))
	apiHandler.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request outside the API base path: %s %s", r.Method, r.URL)
		http.Error(w, "outside the base path", http.StatusBadRequest)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request: %s %s", r.Method, r.URL)
		http.Error(w, "unexpected", http.StatusNotFound)
	})
	server := httptest.NewServer(apiHandler)
	t.Cleanup(server.Close)
	client, err := NewClient(server.URL+baseURLPath+"/", testToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	return client, mux, server.URL, api
}

func testMethod(t *testing.T, r *http.Request, want string) {
	t.Helper()
	if got := r.Method; got != want {
		t.Errorf("Request method: %v, want %v", got, want)
	}
}

// testBody checks a request's JSON body against want, field by field.
func testBody(t *testing.T, r *http.Request, want any) {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	var got, w any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Errorf("request body %q: %v", b, err)
		return
	}
	wb, _ := json.Marshal(want)
	_ = json.Unmarshal(wb, &w)
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func testEmptyBody(t *testing.T, r *http.Request) {
	t.Helper()
	if b, _ := io.ReadAll(r.Body); len(b) != 0 {
		t.Errorf("%s %s: unexpected body %q", r.Method, r.URL.Path, b)
	}
}

// sleeps records the waits instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

func newPoster(c *github.Client, s *sleeps) *Poster {
	return &Poster{Client: c, Owner: "o", Repo: "r", PR: 7, Marker: Marker("ceiling-load"), Token: testToken, Sleep: s.sleep}
}

const testBodyText = "<!-- ceiling:comment generator=ceiling-load -->\nhello"

func comments(cs ...string) string {
	var out []map[string]any
	for i, c := range cs {
		out = append(out, map[string]any{"id": 100 + i, "body": c})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func TestUpsertCreatesFirstComment(t *testing.T) {
	t.Parallel()
	client, mux, _, api := setup(t)
	mux.HandleFunc("/repos/o/r/issues/7/comments", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case "GET":
			testEmptyBody(t, r)
			fmt.Fprint(w, comments("LGTM", "<!-- some other bot -->\nhi"))
		case "POST":
			testBody(t, r, map[string]any{"body": testBodyText})
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, `{"id": 555, "html_url": "https://github.example/o/r/pull/7#issuecomment-555"}`)
		default:
			testMethod(t, r, "GET or POST")
		}
	})
	got, err := newPoster(client, &sleeps{}).Upsert(context.Background(), testBodyText)
	if err != nil {
		t.Fatal(err)
	}
	want := Posted{ID: 555, URL: "https://github.example/o/r/pull/7#issuecomment-555", Created: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Upsert (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"GET /repos/o/r/issues/7/comments?per_page=100", "POST /repos/o/r/issues/7/comments"}, api.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestUpsertEditsInPlace(t *testing.T) {
	t.Parallel()
	client, mux, _, api := setup(t)
	mux.HandleFunc("/repos/o/r/issues/7/comments", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		testEmptyBody(t, r)
		fmt.Fprint(w, comments("first", "<!-- ceiling:comment generator=ceiling-load -->\nold numbers", "later"))
	})
	mux.HandleFunc("/repos/o/r/issues/comments/101", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "PATCH")
		testBody(t, r, map[string]any{"body": testBodyText})
		fmt.Fprint(w, `{"id": 101, "html_url": "u101"}`)
	})
	got, err := newPoster(client, &sleeps{}).Upsert(context.Background(), testBodyText)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Posted{ID: 101, URL: "u101"}, got); diff != "" {
		t.Errorf("Upsert (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"GET /repos/o/r/issues/7/comments?per_page=100", "PATCH /repos/o/r/issues/comments/101"}, api.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// The marker comment sits on page 2, reached through the Link header.
func TestUpsertFindsMarkerOnLaterPage(t *testing.T) {
	t.Parallel()
	client, mux, serverURL, api := setup(t)
	mux.HandleFunc("/repos/o/r/issues/7/comments", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		testEmptyBody(t, r)
		switch r.URL.Query().Get("page") {
		case "":
			w.Header().Set("Link", fmt.Sprintf(`<%s%s/repos/o/r/issues/7/comments?per_page=100&page=2>; rel="next", <%s%s/repos/o/r/issues/7/comments?per_page=100&page=2>; rel="last"`, serverURL, baseURLPath, serverURL, baseURLPath))
			fmt.Fprint(w, comments("a", "b"))
		case "2":
			fmt.Fprint(w, `[{"id": 900, "body": "<!-- ceiling:comment generator=ceiling-load -->\nold"}]`)
		default:
			t.Errorf("page %q requested", r.URL.Query().Get("page"))
		}
	})
	mux.HandleFunc("/repos/o/r/issues/comments/900", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "PATCH")
		testBody(t, r, map[string]any{"body": testBodyText})
		fmt.Fprint(w, `{"id": 900}`)
	})
	got, err := newPoster(client, &sleeps{}).Upsert(context.Background(), testBodyText)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != 900 || got.Created {
		t.Errorf("Upsert = %+v, want comment 900 edited", got)
	}
	want := []string{"GET /repos/o/r/issues/7/comments?per_page=100", "GET /repos/o/r/issues/7/comments?page=2&per_page=100", "PATCH /repos/o/r/issues/comments/900"}
	if diff := cmp.Diff(want, api.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// A fork's token can read but not write: 403 on create is ErrNoPermission.
func TestUpsertForkToken403(t *testing.T) {
	t.Parallel()
	client, mux, _, _ := setup(t)
	mux.HandleFunc("/repos/o/r/issues/7/comments", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case "GET":
			testEmptyBody(t, r)
			fmt.Fprint(w, `[]`)
		case "POST":
			testBody(t, r, map[string]any{"body": testBodyText})
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment"}`)
		}
	})
	s := &sleeps{}
	_, err := newPoster(client, s).Upsert(context.Background(), testBodyText)
	if !errors.Is(err, ErrNoPermission) || !strings.Contains(err.Error(), "Resource not accessible by integration") {
		t.Errorf("Upsert = %v, want ErrNoPermission with GitHub's message", err)
	}
	if len(s.d) != 0 {
		t.Errorf("waited %v on a permission error", s.d)
	}
}

func TestUpsertRateLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		limit    func(w http.ResponseWriter) // the first response
		wantWait time.Duration
	}{
		{"primary 403, reset passed", func(w http.ResponseWriter) {
			w.Header().Set("X-RateLimit-Limit", "5000")
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(-time.Second).Unix(), 10))
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message": "API rate limit exceeded"}`)
		}, time.Second},
		{"secondary 403 with Retry-After", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message": "You have exceeded a secondary rate limit", "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`)
		}, time.Second},
		{"429 with Retry-After", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"message": "Too Many Requests"}`)
		}, 7 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client, mux, _, api := setup(t)
			n := 0
			mux.HandleFunc("/repos/o/r/issues/7/comments", func(w http.ResponseWriter, r *http.Request) {
				switch r.Method {
				case "GET":
					testEmptyBody(t, r)
					if n++; n == 1 {
						tt.limit(w)
						return
					}
					fmt.Fprint(w, `[]`)
				case "POST":
					testBody(t, r, map[string]any{"body": testBodyText})
					fmt.Fprint(w, `{"id": 1}`)
				}
			})
			s := &sleeps{}
			if _, err := newPoster(client, s).Upsert(context.Background(), testBodyText); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]time.Duration{tt.wantWait}, s.d); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			want := []string{"GET /repos/o/r/issues/7/comments?per_page=100", "GET /repos/o/r/issues/7/comments?per_page=100", "POST /repos/o/r/issues/7/comments"}
			if diff := cmp.Diff(want, api.requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpsertRateLimitBounded(t *testing.T) {
	t.Parallel()
	client, mux, _, api := setup(t)
	mux.HandleFunc("/repos/o/r/issues/7/comments", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		testEmptyBody(t, r)
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	s := &sleeps{}
	p := newPoster(client, s)
	p.RateRetries = 2
	_, err := p.Upsert(context.Background(), testBodyText)
	if err == nil || !strings.Contains(err.Error(), "still rate limited after 2 retries") {
		t.Errorf("Upsert = %v, want it to give up after 2 retries", err)
	}
	if len(s.d) != 2 || len(api.requests()) != 3 {
		t.Errorf("%d waits and %d requests, want 2 and 3", len(s.d), len(api.requests()))
	}
}

// An API that echoes the Authorization header in its errors must not get
// the token into any message.
func TestUpsertNeverLeaksToken(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusInternalServerError, http.StatusForbidden, http.StatusUnprocessableEntity, http.StatusTooManyRequests} {
		client, mux, _, _ := setup(t)
		mux.HandleFunc("/repos/o/r/issues/7/comments", func(w http.ResponseWriter, r *http.Request) {
			testMethod(t, r, "GET")
			testEmptyBody(t, r)
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"message": "bad credentials %s", "errors": [{"resource": "%s", "code": "%s"}]}`,
				r.Header.Get("Authorization"), r.Header.Get("Authorization"), testToken)
		})
		p := newPoster(client, &sleeps{})
		p.RateRetries = 1
		_, err := p.Upsert(context.Background(), testBodyText)
		if err == nil {
			t.Fatalf("status %d: no error", status)
		}
		if strings.Contains(err.Error(), testToken) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), testToken) {
			t.Errorf("status %d: the token leaked into the error: %v", status, err)
		}
		if !strings.Contains(err.Error(), "[redacted]") {
			t.Errorf("status %d: %v, want the echoed token shown as [redacted]", status, err)
		}
	}
}

func TestRateLimitWaitCaps(t *testing.T) {
	t.Parallel()
	client, mux, _, _ := setup(t)
	mux.HandleFunc("/repos/o/r/issues/7/comments", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		testEmptyBody(t, r)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	s := &sleeps{}
	p := newPoster(client, s)
	p.MaxWait = time.Minute
	_, err := p.Upsert(context.Background(), testBodyText)
	if err == nil || !strings.Contains(err.Error(), "rate limited for 1h0m0s more, longer than the 1m0s") {
		t.Errorf("Upsert = %v, want a refusal to wait an hour", err)
	}
	if len(s.d) != 0 {
		t.Errorf("waited %v", s.d)
	}
}

func TestNewClientURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                               "https://api.github.com/",
		"https://ghe.example.com/api/v3": "https://ghe.example.com/api/v3/",
	} {
		c, err := NewClient(in, "", nil)
		if err != nil || c.BaseURL.String() != want {
			t.Errorf("NewClient(%q) = %v, %v; want %s", in, c.BaseURL, err, want)
		}
	}
	for _, bad := range []string{"ftp://x", "::", "api.github.com"} {
		if _, err := NewClient(bad, "", nil); err == nil || !strings.Contains(err.Error(), "--api-url") {
			t.Errorf("NewClient(%q) = %v, want an --api-url error", bad, err)
		}
	}
}

// With Author set, a marker copied into another user's comment is skipped.
func TestUpsertOnlyEditsOwnComment(t *testing.T) {
	t.Parallel()
	client, mux, _, api := setup(t)
	mux.HandleFunc("/repos/o/r/issues/7/comments", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "GET")
		testEmptyBody(t, r)
		fmt.Fprint(w, `[
		  {"id": 1, "user": {"login": "mallory", "type": "User"}, "body": "<!-- ceiling:comment generator=ceiling-load -->\nforged"},
		  {"id": 2, "user": {"login": "github-actions[bot]", "type": "Bot"}, "body": "<!-- ceiling:comment generator=ceiling-load -->\nours"}]`)
	})
	mux.HandleFunc("/repos/o/r/issues/comments/2", func(w http.ResponseWriter, r *http.Request) {
		testMethod(t, r, "PATCH")
		testBody(t, r, map[string]any{"body": testBodyText})
		fmt.Fprint(w, `{"id": 2}`)
	})
	p := newPoster(client, &sleeps{})
	p.Author = "github-actions[bot]"
	got, err := p.Upsert(context.Background(), testBodyText)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != 2 {
		t.Errorf("edited comment %d, want 2 (the bot's own)", got.ID)
	}
	if diff := cmp.Diff([]string{"GET /repos/o/r/issues/7/comments?per_page=100", "PATCH /repos/o/r/issues/comments/2"}, api.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

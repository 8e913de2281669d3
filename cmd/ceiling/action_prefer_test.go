package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The compare mode reads the headline last published on the data branch
// (a real clone's origin/<branch>) and passes its connections as
// COMPARE_PREFER, unless the batch is not this run's or the knob is set,
// and its servers' boot and stop as SERVER_COSTS.
func TestPublished(t *testing.T) {
	origin, clone := t.TempDir(), filepath.Join(t.TempDir(), "clone")
	must := func(dir string, args ...string) {
		t.Helper()
		if out, err := runGit(dir, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	must(origin, "init", "-q", "-b", "main")
	must(origin, "config", "user.email", "t@example.com")
	must(origin, "config", "user.name", "t")
	must(origin, "commit", "-q", "--allow-empty", "-m", "code")
	must(origin, "checkout", "-q", "-b", "results")
	pub := filepath.Join(origin, "benchmark", "published")
	if err := os.MkdirAll(pub, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := `{"headline": {"clean": true, "batch": 10, "connections": 64, "throughput_per_s": 1},
	  "curve": [{"ready_ns": 2100000000, "stop_ns": 4000000000}, {"ready_ns": 2000000000, "stop_ns": 4100000000},
	            {"ready_ns": 2200000000, "stop_ns": 3900000000}, {"ready_ns": 0, "stop_ns": 0}]}`
	if err := os.WriteFile(filepath.Join(pub, "ceiling-load.json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	must(origin, "add", ".")
	must(origin, "commit", "-q", "-m", "ceiling: publish")
	must(origin, "checkout", "-q", "main")
	must(filepath.Dir(clone), "clone", "-q", origin, clone)

	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	for _, tc := range []struct {
		name, branch, gen string
		env               []string
		want              int
	}{
		{"published", "results", "ceiling-load", nil, 64},
		{"headline batch set alike", "results", "ceiling-load", []string{"HEADLINE_BATCH", "10"}, 64},
		{"another headline batch", "results", "ceiling-load", []string{"HEADLINE_BATCH", "100"}, 0},
		{"set by hand", "results", "ceiling-load", []string{"COMPARE_PREFER", "32"}, 0},
		{"no such generator", "results", "other", nil, 0},
		{"no such branch", "gh-pages", "ceiling-load", nil, 0},
		{"no branch", "", "ceiling-load", nil, 0},
	} {
		if got, _ := published(clone, tc.branch, tc.gen, env(tc.env...)); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	// What its servers took to boot and stop: the medians of the points
	// that booted their own, unless SERVER_COSTS is set.
	if _, c := published(clone, "results", "ceiling-load", env()); c.String() != "2.1s/4s" {
		t.Errorf("costs %q, want 2.1s/4s", c)
	}
	if _, c := published(clone, "results", "ceiling-load", env("SERVER_COSTS", "1s/1s")); !c.IsZero() {
		t.Errorf("costs %q with SERVER_COSTS set", c)
	}
	if _, c := published(clone, "results", "other", env()); !c.IsZero() {
		t.Errorf("costs %q with nothing published", c)
	}
}

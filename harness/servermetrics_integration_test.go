//go:build e2e

package harness_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/scrape"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/result"
)

// TestMetricsMiniSweep: a real sweep whose target publishes metrics and a
// profile (here a sidecar on loopback, since the server's own address is
// the point's): every point records the change over its window, read after
// the generator's marker opened it and after it ended, and the profile
// saved under --profile.
func TestMetricsMiniSweep(t *testing.T) {
	needProcs(t)
	var mu sync.Mutex
	var reads []time.Time
	var profileSeconds []string
	sidecar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics":
			mu.Lock()
			reads = append(reads, time.Now())
			n := len(reads)
			mu.Unlock()
			fmt.Fprintf(w, "# TYPE reads_total counter\nreads_total{side=\"sidecar\"} %d\n", n*1000)
		case "/debug/pprof/profile":
			mu.Lock()
			profileSeconds = append(profileSeconds, r.URL.Query().Get("seconds"))
			mu.Unlock()
			select { // as pprof does: answer after the profile's seconds
			case <-time.After(time.Second):
			case <-r.Context().Done():
			}
			fmt.Fprint(w, "a profile")
		default:
			http.NotFound(w, r)
		}
	}))
	defer sidecar.Close()

	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {4, 8}})
	o.ProfileDir = filepath.Join(t.TempDir(), "profiles")
	tg := refTarget(t)
	tg.Metrics = &result.MetricsSpec{URL: sidecar.URL + "/metrics?token=sweep-token-123"}
	tg.Profile = &target.ProfileSpec{URL: sidecar.URL + "/debug/pprof/profile?seconds={seconds}"}
	if err := tg.Check(); err != nil {
		t.Fatal(err)
	}
	// Once: the sidecar counts reads over the whole test, and a contended
	// sweep is judged here as it is (the reads are per point either way).
	r, _, err := runSweepOnce(t, context.Background(), o, tg)
	if err != nil && !errors.Is(err, harness.ErrContended) {
		t.Fatalf("sweep: %v", err)
	}
	// Two sweep points, and an A-A repeat unless the machine was busy.
	if len(r.Curve) < 2 {
		t.Fatalf("curve has %d points, want 2 or 3", len(r.Curve))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reads) != 2*len(r.Curve) {
		t.Fatalf("%d metrics reads for %d points, want 2 per point", len(reads), len(r.Curve))
	}
	for i, p := range r.Curve {
		sm := p.ServerMetrics
		if sm == nil || sm.Error != "" || len(sm.Series) != 1 {
			t.Fatalf("point %d: server_metrics %+v", p.Index, sm)
		}
		s := sm.Series[0]
		if s.Name != `reads_total{side="sidecar"}` || s.Delta == nil || *s.Delta != 1000 || s.RatePerS == nil || *s.RatePerS <= 0 {
			t.Errorf("point %d: series %+v", p.Index, s)
		}
		// The reads bracket the window: the first after the marker that
		// opened it, the second at least the window after the marker.
		dir, _ := filepath.Glob(filepath.Join(o.WorkDir, fmt.Sprintf("point-%03d-*", p.Index)))
		if len(dir) != 1 {
			t.Fatalf("point %d: directories %v", p.Index, dir)
		}
		fi, err := os.Stat(filepath.Join(dir[0], "measure.marker"))
		if err != nil {
			t.Fatal(err)
		}
		opened := fi.ModTime()
		before, after := reads[2*i], reads[2*i+1]
		if slack := 50 * time.Millisecond; before.Before(opened.Add(-slack)) || after.Before(opened.Add(o.Duration-slack)) {
			t.Errorf("point %d: window opened %s, reads at +%s and +%s: want the first after the marker, the second after the window (%s)",
				p.Index, opened.Format(time.StampMicro), before.Sub(opened), after.Sub(opened), o.Duration)
		}
		want := scrape.ProfilePath(o.ProfileDir, p.Index, result.PointKey{Batch: p.Batch, Connections: p.Connections, Rep: p.Rep})
		if p.ProfileFile != want || p.ProfileError != "" {
			t.Errorf("point %d: profile_file %q, profile_error %q; want %q", p.Index, p.ProfileFile, p.ProfileError, want)
		} else if b, err := os.ReadFile(want); err != nil || string(b) != "a profile" {
			t.Errorf("point %d: profile %q, %v", p.Index, b, err)
		}
	}
	if strings.Join(profileSeconds, ",") != strings.TrimSuffix(strings.Repeat("1,", len(r.Curve)), ",") {
		t.Errorf("profiles asked for seconds %v, want the 1 s window each", profileSeconds)
	}
	doc, err := os.ReadFile(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(doc), "sweep-token-123") || !strings.Contains(string(doc), `"server_metrics"`) {
		t.Errorf("result: token present or server_metrics missing:\n%s", doc)
	}
}

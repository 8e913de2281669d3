//go:build e2e

package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/result"
)

// TestUnpinnedURLIsRefusedOrWarned: an echo_url with a fixed address
// measures a server the harness did not boot. Here that server is a real
// refserver started by the test, unpinned. Without allow_unpinned_url the
// target is refused before anything boots; with it, the sweep runs and
// its result says which URL was driven instead of the point's server.
func TestUnpinnedURLIsRefusedOrWarned(t *testing.T) {
	needProcs(t)
	port, err := target.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	other, err := supervise.Start(context.Background(), supervise.Spec{
		Name: "other", Path: filepath.Join(bin, "refserver"), Args: []string{"--addr", addr},
		LogPath: filepath.Join(t.TempDir(), "other.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Stop(3 * time.Second) })
	probe, _ := supervise.ParseProbe("tcp:" + addr)
	if err := supervise.WaitReady(context.Background(), other, probe, 10*time.Second); err != nil {
		t.Fatal(err)
	}

	tg := refTarget(t)
	echoURL := "ws://" + addr + "/echo"
	tg.SetBlock("echo_url", json.RawMessage(strconv.Quote(echoURL)))
	if err := tg.CheckRunnable("echo"); err == nil || !strings.Contains(err.Error(), "echo_url") {
		t.Fatalf("unpinned echo_url: CheckRunnable = %v, want an error naming echo_url", err)
	}

	tg.AllowUnpinnedURL = true
	if err := tg.CheckRunnable("echo"); err != nil {
		t.Fatalf("allowed: %v", err)
	}
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {2}})
	// The server measured is the other one, on no pinned CPU of the
	// sweep's: its work is foreign work on them, every point is contended
	// by design, and running it again cannot change that.
	o.Planted = true
	r, _, err := runSweep(t, context.Background(), o, tg)
	if err != nil && !errors.Is(err, harness.ErrNoCleanHeadline) {
		t.Fatal(err)
	}
	if r.Meta.Target.URL != echoURL {
		t.Errorf("meta.target.url %q, want %q", r.Meta.Target.URL, echoURL)
	}
	var warned bool
	for _, w := range r.Warnings {
		warned = warned || strings.Contains(w, echoURL) && strings.Contains(w, "allow_unpinned_url")
	}
	if !warned {
		t.Errorf("warnings %q do not name the unpinned URL", r.Warnings)
	}
	if p := r.Curve[0]; p.Status != result.StatusOK || p.ThroughputPerS <= 0 {
		t.Errorf("point against the other server: %s %q, %v/s", p.Status, p.FailReason, p.ThroughputPerS)
	}
	// The booted server's counter does not hold the other server's count:
	// the check says it could not be made, and the point is not clean.
	if p := r.Curve[0]; p.CountCheck == nil || p.CountCheck.Verdict != "unchecked" || !strings.Contains(p.CountCheck.Reason, "allow_unpinned_url") || p.Clean {
		t.Errorf("point against the other server: clean %v, count check %+v; want unchecked naming allow_unpinned_url", p.Clean, p.CountCheck)
	}
}

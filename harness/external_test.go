//go:build e2e

package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// TestExternalMiniSweep: a refserver the test starts (not the harness),
// swept as an external target: every point measures, the server's CPU
// comes from its /metrics, every point drops all its clients at once
// after its window (DROP=1) and the server answers its probe and a new
// client, and the server is still running afterwards, the same process,
// untouched. Then the same server through a target whose echo_url is not
// the point's (allow_unpinned_url). Without metrics an external server's
// CPU is unknown, and said so: a rule of the verdict's
// (TestExternalJudge).
func TestExternalMiniSweep(t *testing.T) {
	needProcs(t)
	port, err := target.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	// On CPU 1, where the sweep's own server would be (ExternalCPUs 1):
	// left to the scheduler it ran on the generator's CPU 0 too, and every
	// point was contended by it.
	cmd := pinning.Command(pinning.Spec{CPUs: pinning.CPUSet{1}}, filepath.Join(bin, "refserver"), "--addr", addr, "--app-id", "app-id", "--key", "app-key", "--secret", "app-secret")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	child, err := pinning.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	srv := child.Cmd
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-child.Pid(), syscall.SIGKILL)
		<-exited
	})

	tg := target.Spec{
		Name: "refserver-external", External: true, ExternalCPUs: 1,
		Ready:   "http://" + addr + "/health",
		Metrics: &result.MetricsSpec{URL: "http://" + addr + "/metrics", Format: target.MetricsPrometheus},
	}
	tg.SetBlock("echo_url", []byte(`"ws://`+addr+`/echo"`))
	if err := tg.Check(); err != nil {
		t.Fatal(err)
	}
	if err := tg.CheckRunnable("echo"); err != nil {
		t.Fatal(err)
	}
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {4, 8}})
	o.ServerCPUs = nil // SRV_CPUSET is refused for an external target
	o.Drop = true
	r, _, err := runSweep(t, context.Background(), o, tg)
	if err != nil && !errors.Is(err, harness.ErrContended) {
		t.Fatalf("sweep: %v", err)
	}
	select {
	case err := <-exited:
		t.Fatalf("the external server exited during the sweep: %v", err)
	default:
	}
	if err := srv.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the external server is gone: %v", err)
	}
	resp, err := http.Get("http://" + addr + "/health")
	if err != nil {
		t.Fatalf("the external server no longer answers: %v", err)
	}
	resp.Body.Close()

	if !r.Meta.Target.External || r.Meta.Target.ExternalCPUs != 1 {
		t.Errorf("meta.target: %+v", r.Meta.Target)
	}
	if len(r.Curve) < 2 {
		t.Fatalf("curve has %d points, want 2 or 3", len(r.Curve))
	}
	for _, p := range r.Curve {
		if p.Status != result.StatusOK {
			t.Fatalf("point %d: %s: %s", p.Index, p.Status, p.FailReason)
		}
		c := p.ServerCPU
		if c.Source != verdict.CPUFromMetrics || c.MeanCores <= 0 || c.PinnedCores != 1 || c.FractionMean != c.MeanCores {
			t.Errorf("point %d: server CPU %+v, want it from process_cpu_seconds_total against 1 core", p.Index, c)
		}
		if len(p.Escalated) > 0 || len(p.Escaped) > 0 {
			t.Errorf("point %d: escalated %v, escaped %v: the harness touched a process", p.Index, p.Escalated, p.Escaped)
		}
		if strings.Contains(p.VerdictReason, "server CPU unknown") {
			t.Errorf("point %d: %s", p.Index, p.VerdictReason)
		}
		// DROP=1: every client dropped at once after the window, the
		// server's ready probe answered and a new client was served.
		if d := p.Drop; d == nil || d.Dropped != p.Connections || !d.ServerUp || d.ReadyAfterNs == nil || !d.NewClientOK || d.ReadyProbe == "" {
			t.Errorf("point %d: drop %+v", p.Index, d)
		}
	}
	// The same server, unpinned: a target that boots its own server but
	// whose echo_url names this one's fixed address measures a server
	// the harness did not boot. Without allow_unpinned_url the target is
	// refused before anything boots; with it, the sweep runs and its
	// result says which URL was driven instead of the point's server,
	// whose count could not be checked.
	unpinned := refTarget(t)
	echoURL := "ws://" + addr + "/echo"
	unpinned.SetBlock("echo_url", json.RawMessage(strconv.Quote(echoURL)))
	if err := unpinned.CheckRunnable("echo"); err == nil || !strings.Contains(err.Error(), "echo_url") {
		t.Fatalf("unpinned echo_url: CheckRunnable = %v, want an error naming echo_url", err)
	}
	unpinned.AllowUnpinnedURL = true
	if err := unpinned.CheckRunnable("echo"); err != nil {
		t.Fatalf("allowed: %v", err)
	}
	o = miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {2}})
	// The server measured is the test's, on the pinned server CPU but
	// no process of the sweep's: its work is foreign work there, every
	// point is contended by design, and running it again cannot change
	// that.
	o.Planted = true
	r, _, err = runSweep(t, context.Background(), o, unpinned)
	if err != nil && !errors.Is(err, harness.ErrNoCleanHeadline) {
		t.Fatal(err)
	}
	if r.Meta.Target.URL != echoURL {
		t.Errorf("meta.target.url %q, want %q", r.Meta.Target.URL, echoURL)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, echoURL) && strings.Contains(w, "allow_unpinned_url") }) {
		t.Errorf("warnings %q do not name the unpinned URL", r.Warnings)
	}
	if p := r.Curve[0]; p.Status != result.StatusOK || p.ThroughputPerS <= 0 {
		t.Errorf("point against the test's server: %s %q, %v/s", p.Status, p.FailReason, p.ThroughputPerS)
	}
	// The booted server's counter does not hold the other server's
	// count: the check says it could not be made, and the point is not
	// clean.
	if p := r.Curve[0]; p.CountCheck == nil || p.CountCheck.Verdict != "unchecked" || !strings.Contains(p.CountCheck.Reason, "allow_unpinned_url") || p.Clean {
		t.Errorf("point against the test's server: clean %v, count check %+v; want unchecked naming allow_unpinned_url", p.Clean, p.CountCheck)
	}
	if err := srv.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the test's server is gone after the second sweep: %v", err)
	}
}

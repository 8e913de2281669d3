//go:build e2e

package harness_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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
// comes from its /metrics, and the server is still running afterwards,
// the same process, untouched.
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
	}
	// No ready probe and no metrics: the server's CPU is unknown, said
	// so, and no point is server-saturated.
	tg.Ready, tg.Metrics, tg.ExternalCPUs = "", nil, 0
	o = miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {4}})
	o.ServerCPUs, o.Reps = nil, 1
	r, _, err = runSweep(t, context.Background(), o, tg)
	if err != nil && !errors.Is(err, harness.ErrContended) {
		t.Fatalf("sweep without metrics: %v", err)
	}
	for _, p := range r.Curve {
		if p.Status != result.StatusOK || p.ServerCPU.Source != verdict.CPUUnknown || p.Verdict == result.VerdictServerSaturated || p.Verdict == result.VerdictBoth ||
			!strings.Contains(p.VerdictReason, "server CPU unknown (external server") {
			t.Errorf("point %d without metrics: %s %s %+v: %s", p.Index, p.Status, p.Verdict, p.ServerCPU, p.VerdictReason)
		}
	}
	if err := srv.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the external server is gone after the second sweep: %v", err)
	}
}

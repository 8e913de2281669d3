//go:build e2e

package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/testenv/hog"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// startHog is hog.Start (internal/testenv/hog), which
// cmd/ceiling's end-to-end tests share.
var startHog = hog.Start

// TestCPUHogOnServerCPUIsNotPublished runs a QUICK sweep of refserver
// (both quick batch sizes, two rungs each) while a busy loop shares the
// server's CPU: no point may be clean, every point that ran must say it
// was contended, and `ceiling sweep` must exit 1 so the headline is not
// published. Before the fix this exited 0 with a "clean" headline and a
// warning.
func TestCPUHogOnServerCPUIsNotPublished(t *testing.T) {
	needProcs(t)
	startHog(t, pinning.CPUSet{1}, 2*time.Minute)

	dir := t.TempDir()
	out := filepath.Join(dir, "out.json")
	cmd := sweepCommand(t, dir, out, "--quick")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	// The quick sweep's 4 points, at 1 s windows after 300 ms: the hog
	// takes half of every one of them.
	cmd.Env = append(os.Environ(), "QUICK=", "SRV_CPUSET=", "LT_CPUSET=", "BATCH_LADDER=", "DURATION=1s", "WARMUP=300ms", "GENERATOR=", "TARGET=", "OUT=")
	msg, err := cmd.CombinedOutput()
	t.Logf("ceiling sweep --quick with a hog on the server's CPU:\n%s", msg)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1 (not publishable)", err)
	}
	if !strings.Contains(string(msg), "contended") {
		t.Errorf("the output does not say the run was contended")
	}
	// The table's CONTENDED line names the hog (a shell busy loop),
	// wherever it comes in the list of who took the CPUs.
	if !regexp.MustCompile(`CONTENDED: .*other processes took up to [\d.]+% of the server CPUs \(a clean point allows 3%\): (.*, )?sh \(pid \d+\) up to`).MatchString(flatText(string(msg))) {
		t.Errorf("the CONTENDED line does not name the hog")
	}

	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no result written: %v", err)
	}
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if !r.Config.Quick || len(r.Config.Order) != 4 {
		t.Errorf("config %+v: want the quick sweep's 4 points", r.Config)
	}
	if r.Headline.Clean || r.NoiseFloorPct != nil {
		t.Errorf("headline %+v (noise %v) measured next to a hog", r.Headline, r.NoiseFloorPct)
	}
	hogNamed := regexp.MustCompile(`of the server CPUs \(above 3%\): (.*, )?sh \(pid `)
	for _, p := range measuredPoints(t, &r) {
		if p.Clean || !p.Contended || !hogNamed.MatchString(p.VerdictReason) {
			t.Errorf("point %d: clean %v, contended %v (%s); server cpu %+v", p.Index, p.Clean, p.Contended, p.VerdictReason, p.ServerCPU)
		}
		if p.ServerCPU.PinnedBusy < 0.9 {
			t.Errorf("point %d: server CPU %.0f%% busy with a busy loop on it", p.Index, p.ServerCPU.PinnedBusy*100)
		}
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "contended: in ") {
		t.Errorf("warnings %q lack the contention", r.Warnings)
	}
	// The steal fraction is recorded per point and side, known or -1.
	var raw struct {
		Curve []map[string]map[string]any `json:"curve"`
	}
	_ = json.Unmarshal(data, &raw)
	for i, p := range raw.Curve {
		for _, side := range []string{"server_cpu", "generator_cpu"} {
			if _, ok := p[side]["pinned_cpus_steal_fraction"]; !ok {
				t.Errorf("point %d %s lacks pinned_cpus_steal_fraction", i+1, side)
			}
		}
	}
}

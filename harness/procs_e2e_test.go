//go:build e2e

package harness_test

// What the end-to-end tests that run `ceiling sweep` as a process, or
// watch the processes a sweep starts, share: the binary's command line,
// scripts and the stubborn server, and waits on the point's files and
// on the processes that carry the harness's containment marker.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/result"
)

var (
	stubbornOnce sync.Once
	stubbornBin  string
	stubbornErr  error
)

// shellJoin quotes argv for sh -c.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// withEnv lists the live processes whose environment holds key=value
// with value starting with prefix.
func withEnv(key, prefix string) map[int]string {
	out := map[int]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !supervise.Alive(pid) {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			if v, ok := strings.CutPrefix(kv, key+"="); ok && strings.HasPrefix(v, prefix) {
				comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
				out[pid] = strings.TrimSpace(string(comm))
			}
		}
	}
	return out
}

// reachPoint waits until a point directory matching pattern has its
// measure marker; false if the harness exited first.
func reachPoint(t *testing.T, dir, pattern string, exited <-chan struct{}) bool {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m, _ := filepath.Glob(filepath.Join(dir, pattern, "measure.marker")); len(m) > 0 {
			return true
		}
		select {
		case <-exited:
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("no %s point reached its measured window in 60s", pattern)
	return false
}

// waitNone waits until no live process carries the marker of harness
// owner; it fails listing the survivors.
func waitNone(t *testing.T, owner int, limit time.Duration) {
	t.Helper()
	prefix := strconv.Itoa(owner) + "."
	deadline := time.Now().Add(limit)
	for {
		left := withEnv(supervise.MarkerEnv, prefix)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes of the killed harness %d survive %s: %v", len(left), owner, limit, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// sweepCommand is `ceiling sweep` as a process (server on CPU 1,
// generator on CPU 0, the test build's refserver), its knob variables
// cleared so the host's cannot leak in.
func sweepCommand(t *testing.T, dir, out string, args ...string) *exec.Cmd {
	t.Helper()
	return ceilingSweep(t, refTarget(t), dir, out, nil, args...)
}

// waitMarker waits until a point directory matching pattern under dir has
// its generator's measure marker: server and generator are both up.
func waitMarker(t *testing.T, dir, pattern string) {
	t.Helper()
	waitFile(t, dir, filepath.Join(pattern, "measure.marker"))
}

// stubborn builds testdata/stubborn: refserver ignoring SIGTERM.
func stubborn(t *testing.T) string {
	t.Helper()
	stubbornOnce.Do(func() {
		out := filepath.Join(bin, "stubborn")
		cmd := exec.Command("go", "build", "-o", out, "./testdata/stubborn")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		stubbornErr = cmd.Run()
		stubbornBin = out
	})
	if stubbornErr != nil {
		t.Fatalf("build testdata/stubborn: %v", stubbornErr)
	}
	return stubbornBin
}

func stubbornTarget(t *testing.T, stopGrace string) target.Spec {
	return target.Spec{
		Name:      "stubborn",
		Command:   []string{stubborn(t), "--addr", "{addr}"},
		Blocks:    map[string]json.RawMessage{"echo_url": json.RawMessage(`"ws://{addr}/echo"`)},
		Ready:     "tcp:{addr}",
		StopGrace: stopGrace,
	}
}

// ceilingSweep is `ceiling sweep` as a process with its knob variables
// cleared, the target written to its own directory (not the work dir).
func ceilingSweep(t *testing.T, tg target.Spec, work, out string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	tgFile := filepath.Join(t.TempDir(), "target.json")
	data, _ := json.Marshal(tg)
	if err := os.WriteFile(tgFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	args = append([]string{"sweep", "--srv-cpuset", "1", "--lt-cpuset", "0", "--warmup", "200ms",
		"--target", tgFile, "--out", out, "--work-dir", work}, args...)
	cmd := exec.Command(filepath.Join(bin, "ceiling"), args...)
	cmd.Env = append(os.Environ(), "QUICK=", "SRV_CPUSET=", "LT_CPUSET=", "BATCH_LADDER=", "DURATION=", "WARMUP=",
		"GENERATOR=", "TARGET=", "OUT=", "KEEP_WORK_DIR=")
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

func readResult(t *testing.T, path string) result.Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("result: %v", err)
	}
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("result %s: %v", path, err)
	}
	return r
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitFile waits until a file matching pattern under dir exists.
func waitFile(t *testing.T, dir, pattern string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s under %s", pattern, dir)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// measuredPoints is the sweep's points that measured, each failed one
// logged; a sweep where none did fails the test: nothing was judged.
func measuredPoints(t *testing.T, r *result.Result) []result.Point {
	t.Helper()
	var ok []result.Point
	for _, p := range r.Curve {
		if p.Status != result.StatusOK {
			t.Logf("point %d failed: %s", p.Index, p.FailReason)
			continue
		}
		ok = append(ok, p)
	}
	if len(ok) == 0 {
		t.Fatal("no point measured: nothing was judged")
	}
	return ok
}

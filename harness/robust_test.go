//go:build e2e

package harness_test

// Issue 8: secrets, stale files, OUT, interrupts, escalation, work dirs —
// each reproduced with real processes.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/outfile"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/result"
)

var (
	stubbornOnce sync.Once
	stubbornBin  string
	stubbornErr  error
)

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

// TestNoSecretInAnyOutput (item 1): secrets given every way the harness
// knows — --server-cmd, the target's secrets and secret_env, a GENERATOR
// flag, the harness's own environment — with a server that prints them
// all and fails its first point, and a generator wrapper that prints its
// arguments. None may appear in stdout, stderr, OUT or any file of the
// work dir.
func TestNoSecretInAnyOutput(t *testing.T) {
	needProcs(t)
	const (
		cmdSecret     = "CMDSECRET-7f3a9c"
		envSecret     = "ENVSECRET-51be02"
		literalSecret = "LITSECRET-ab12cd"
		genToken      = "GENTOKEN-c0ffee"
		ambientToken  = "AMBTOKEN-9d9d9d"
	)
	secrets := []string{cmdSecret, envSecret, literalSecret, genToken, ambientToken, "app-secret"}
	dir, work := t.TempDir(), t.TempDir()
	out := filepath.Join(t.TempDir(), "out.json")
	srv := script(t, dir, "chatty-server", fmt.Sprintf(`addr=$2 secret=$4
echo "config: addr=$addr secret=$secret license=$LICENSE token=$CHATTY_API_TOKEN literal=%s"
if [ -e %[2]s/died-once ]; then exec %[3]s/refserver --addr "$addr"; fi
touch %[2]s/died-once
%[3]s/refserver --addr "$addr" & pid=$!
sleep 0.8
echo "chatty-server: dying with secret $secret"
kill -9 $pid
exit 3
`, literalSecret, dir, bin))
	gen := script(t, dir, "chatty-gen", fmt.Sprintf(`echo "generator args: $*"
shift 2
exec %s/ceiling load "$@"
`, bin))
	tg := refTarget(t)
	tg.Env = map[string]string{"LICENSE": envSecret}
	tg.SecretEnv = []string{"LICENSE"}
	tg.SecretValues = []string{literalSecret}
	cmd := ceilingSweep(t, tg, work, out, []string{"CHATTY_API_TOKEN=" + ambientToken},
		"--batch-ladder", "10", "--conns-ladder", "10=2,4", "--duration", "1s",
		"--server-cmd", srv+" --addr {addr} --secret "+cmdSecret,
		"--generator", gen+" --api-token "+genToken)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("exit %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())

	r := readResult(t, out)
	if len(r.Curve) == 0 || r.Curve[0].Status != result.StatusFailed {
		t.Fatalf("want the first point failed by the server, curve %+v", r.Curve)
	}
	// The leak routes are exercised, so the test can fail: the failed
	// point's tail is the config line, the command carries the flag.
	if tail := r.Curve[0].LogTail; !strings.Contains(tail, "config:") || !strings.Contains(tail, "secret=REDACTED") {
		t.Errorf("log tail %q: want the config line, redacted", tail)
	}
	if cmdline := strings.Join(r.Meta.Command, " "); !strings.Contains(cmdline, "--secret REDACTED") || !strings.Contains(cmdline, "--api-token REDACTED") {
		t.Errorf("meta.command %q: want the flag values masked", cmdline)
	}

	check := func(what string, data []byte) {
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds the secret %s", what, s)
			}
		}
	}
	check("stdout", stdout.Bytes())
	check("stderr", stderr.Bytes())
	check("OUT", mustRead(t, out))
	files := 0
	filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files++
			check(p, mustRead(t, p))
		}
		return nil
	})
	if files < 6 {
		t.Errorf("only %d files in the work dir: the points did not run", files)
	}
	// The server's own log had the secret while the point ran; it was
	// redacted when the point ended.
	logs, _ := filepath.Glob(filepath.Join(work, "point-001-*", "server.log"))
	if len(logs) != 1 || !bytes.Contains(mustRead(t, logs[0]), []byte("secret=REDACTED")) {
		t.Errorf("point 1 server.log %v: want the printed config, redacted", logs)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReusedWorkDirIsFresh (item 2): a second run in the same work dir
// with a generator that writes no JSON must fail every point, not read
// the first run's load.json.
func TestReusedWorkDirIsFresh(t *testing.T) {
	needProcs(t)
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {2}})
	o.Reps = 1
	first, _, err := runSweep(t, context.Background(), o, refTarget(t))
	if err != nil && !errors.Is(err, harness.ErrNoCleanHeadline) {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(o.WorkDir, "point-001-*", "load.json"))
	if len(old) != 1 || first.Curve[0].Status != result.StatusOK {
		t.Fatalf("the first run left no load.json to be stale (%v, %+v)", old, first.Curve)
	}

	dir := t.TempDir()
	markerOnly := script(t, dir, "marker-only", `while [ $# -gt 0 ]; do
  if [ "$1" = --measure-marker ]; then touch "$2"; fi
  shift
done
exit 0
`)
	says401 := script(t, dir, "says-401", "echo 'connecting 4'\necho 'says-401: preflight: the server answered HTTP 200 with {\"code\":401}' >&2\nexit 1\n")
	for _, tt := range []struct{ generator, reason string }{
		{"/bin/true", "generator exited before creating its measure marker (exit status 0)"},
		// The generator's own last words are the reason's, on the
		// terminal's line too (not only in log_tail).
		{says401, `generator exited before creating its measure marker (exit status 1): says-401: preflight: the server answered HTTP 200 with {"code":401}`},
		{markerOnly, "generator result: no JSON written"},
	} {
		o2 := *o
		o2.Generator = tt.generator
		r, _, err := runSweep(t, context.Background(), &o2, refTarget(t))
		if !errors.Is(err, harness.ErrNoCleanHeadline) {
			t.Errorf("%s: error %v, want ErrNoCleanHeadline", tt.generator, err)
		}
		if len(r.Curve) != 1 || r.Curve[0].Status != result.StatusFailed || !strings.HasPrefix(r.Curve[0].FailReason, tt.reason) {
			t.Errorf("%s: curve %+v, want the point failed: %s", tt.generator, r.Curve, tt.reason)
		}
		if r.Headline.Clean || r.Curve[0].ThroughputPerS != 0 {
			t.Errorf("%s: an old figure came back: headline %+v", tt.generator, r.Headline)
		}
	}
}

// TestSIGINTStubbornServer (items 5, 13): a server that ignores SIGTERM
// and a stop_grace of 60 s, interrupted inside a point's window and while
// the harness waits out the grace of a finished point's stop. Either
// way the harness must write the partial result and exit within seconds;
// an interrupted point must not count as failed, and the SIGKILL the
// server took must be recorded.
func TestSIGINTStubbornServer(t *testing.T) {
	needProcs(t)
	for _, tt := range []struct {
		name     string
		duration string
		wait     func(t *testing.T, work string)
	}{
		{"in the window", "20s", func(t *testing.T, work string) { waitMarker(t, work, "point-001-*") }},
		{"in the stop", "1s", func(t *testing.T, work string) {
			// The generator's JSON is there: the window is over and the
			// harness is stopping the server (60 s of grace).
			waitFile(t, work, "point-001-*/load.json")
			time.Sleep(500 * time.Millisecond)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			work := t.TempDir()
			out := filepath.Join(t.TempDir(), "out.json")
			cmd := ceilingSweep(t, stubbornTarget(t, "60s"), work, out, nil,
				"--batch-ladder", "10", "--conns-ladder", "10=2,4", "--duration", tt.duration)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			tt.wait(t, work)
			kids, _ := supervise.Descendants(cmd.Process.Pid)
			sent := time.Now()
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			took := time.Since(sent)
			t.Logf("exit %v after %s\nstderr:\n%s", err, took, stderr.String())
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Errorf("exit %v, want status 1", err)
			}
			// The grace is min(60s, 2s): far below the target's 60 s even
			// on a loaded machine.
			if took > 20*time.Second {
				t.Errorf("the harness took %s after SIGINT (stop_grace 60s, bounded grace %s)", took, harness.MaxInterruptGrace)
			}
			for _, pid := range kids {
				if supervise.Alive(pid) {
					t.Errorf("process %d outlived the harness", pid)
				}
			}
			r := readResult(t, out)
			if !r.Partial || !strings.Contains(r.PartialReason, "interrupted") {
				t.Errorf("partial %v %q", r.Partial, r.PartialReason)
			}
			all := strings.Join(r.Warnings, "\n")
			if !strings.Contains(all, "server did not exit within its grace after SIGTERM") || !strings.Contains(all, "SIGKILLed") {
				t.Errorf("warnings lack the escalation to SIGKILL:\n%s", all)
			}
			if tt.name == "in the window" {
				if len(r.Curve) != 0 {
					t.Errorf("curve %+v: the interrupted point must not be in it (nor counted failed)", r.Curve)
				}
				if !strings.Contains(all, "point 1 (batch 10, 2 connections, rep 0) was interrupted") {
					t.Errorf("warnings lack the interrupted point:\n%s", all)
				}
				return
			}
			// Interrupted after its window: the point was measured and
			// stays, with the SIGKILL its server took.
			if len(r.Curve) != 1 || r.Curve[0].Status != result.StatusOK || len(r.Curve[0].Escalated) != 1 || r.Curve[0].Escalated[0] != "server" {
				t.Errorf("curve %+v: want point 1 measured, its server escalated", r.Curve)
			}
		})
	}
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

// TestEscalationRecorded (item 13): a server that needed SIGKILL at the
// end of a normal point says so in the point and a warning.
func TestEscalationRecorded(t *testing.T) {
	needProcs(t)
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {2}})
	r, _, err := runSweep(t, context.Background(), o, stubbornTarget(t, "300ms"))
	if err != nil && !errors.Is(err, harness.ErrNoCleanHeadline) {
		t.Fatal(err)
	}
	p := r.Curve[0]
	if len(p.Escalated) != 1 || p.Escalated[0] != "server" {
		t.Errorf("point 1 escalated %v, want [server]", p.Escalated)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "point 1: server did not exit within its grace after SIGTERM") {
		t.Errorf("warnings %q lack the escalation", r.Warnings)
	}
}

// TestSIGKILLLeavesNoCompleteOUT (item 13): an OUT from an earlier run is
// replaced as soon as the sweep starts, so a harness killed outright
// leaves a document saying it did not finish, not the old one.
func TestSIGKILLLeavesNoCompleteOUT(t *testing.T) {
	needProcs(t)
	work := t.TempDir()
	out := filepath.Join(t.TempDir(), "out.json")
	old := result.Result{SchemaVersion: result.SchemaVersion, Regime: "an earlier run", Warnings: []string{}}
	old.Headline.Clean = true
	if err := outfile.Write(out, &old); err != nil {
		t.Fatal(err)
	}
	cmd := ceilingSweep(t, refTarget(t), work, out, nil, "--batch-ladder", "10", "--conns-ladder", "10=2,4", "--duration", "3s")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitMarker(t, work, "point-002-*")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// What the killed harness started dies with it (the parent-death
	// signal), within a bound: else it would write on in the work dir.
	if left := waitLeftGone(t, 10*time.Second); len(left) > 0 {
		t.Errorf("10 s after the harness was SIGKILLed, still running: %v", left)
	}
	r := readResult(t, out)
	if r.Regime == "an earlier run" || !r.Partial || !strings.Contains(r.PartialReason, "in progress") {
		t.Fatalf("after SIGKILL OUT is partial %v %q (regime %q): want this run's in-progress document", r.Partial, r.PartialReason, r.Regime)
	}
	if len(r.Curve) != 1 || r.Headline.Clean && r.Curve[0].Status != result.StatusOK {
		t.Errorf("curve %+v: want the point done before the kill", r.Curve)
	}
}

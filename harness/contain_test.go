//go:build e2e

package harness_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/testenv"
	"github.com/ceiling-bench/ceiling/result"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/publish"
)

// Containment: see docs/sweep.md, "Containment". These tests reproduce
// issue 8 item 3 and item 13's headroom cgroup with real processes.

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

// sweepWith is `ceiling sweep` as a process with target tg.
func sweepWith(t *testing.T, dir string, tg target.Spec, args ...string) *exec.Cmd {
	t.Helper()
	tgFile := filepath.Join(dir, "target.json")
	data, _ := json.Marshal(tg)
	if err := os.WriteFile(tgFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	args = append([]string{"sweep", "--srv-cpuset", "1", "--lt-cpuset", "0", "--warmup", "200ms",
		"--target", tgFile, "--out", filepath.Join(dir, "out.json"), "--work-dir", dir}, args...)
	cmd := exec.Command(filepath.Join(bin, "ceiling"), args...)
	cmd.Env = append(os.Environ(), "QUICK=", "SRV_CPUSET=", "LT_CPUSET=", "BATCH_LADDER=", "DURATION=", "WARMUP=", "GENERATOR=", "TARGET=", "OUT=", "HEADROOM_PROBE=")
	return cmd
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

// (a) A target whose command is a launcher script: the server is the
// script's child. SIGKILLing the harness used to leave it running,
// pinned: the parent-death signal reached the script only.
func TestSIGKILLHarnessTakesLauncherTree(t *testing.T) {
	needProcs(t)
	dir := t.TempDir()
	tg := refTarget(t)
	tg.Command = []string{"/bin/sh", "-c", shellJoin(tg.Command) + " & wait"}
	cmd := sweepWith(t, dir, tg, "--batch-ladder", "10", "--conns-ladder", "10=2", "--duration", "3s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	if !reachPoint(t, dir, "point-*", exited) {
		t.Fatal("the harness exited before its first point's window")
	}
	before := withEnv(supervise.MarkerEnv, strconv.Itoa(cmd.Process.Pid)+".")
	var server int
	for pid, comm := range before {
		if comm == "refserver" {
			server = pid
		}
	}
	if server == 0 {
		t.Fatalf("no refserver among the harness's marked processes %v", before)
	}
	if st, err := supervise.ReadStat(server); err != nil || before[st.PPid] != "sh" {
		t.Fatalf("refserver's parent is %d (%s), want the launcher script", st.PPid, before[st.PPid])
	}
	t.Logf("before SIGKILL: %v", before)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	killed := time.Now()
	waitNone(t, cmd.Process.Pid, 5*time.Second)
	t.Logf("the whole tree (%d processes) was gone %s after the SIGKILL", len(before), time.Since(killed).Round(time.Millisecond))
}

// (b) A server that daemonizes a helper (double fork and setsid) during a
// normal run: it used to leak one process per point, with no warning.
// The supervisor, its subreaper, stops it with the point: nothing is
// left, and nothing escaped.
func TestDaemonizingServerLeavesNothing(t *testing.T) {
	needProcs(t)
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {2}})
	tg := refTarget(t)
	tag := "daemon-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	tg.Env = map[string]string{"CEILING_TEST_TAG": tag}
	tg.Command = []string{"/bin/sh", "-c", "(setsid sleep 300 &); exec " + shellJoin(tg.Command)}
	r, _, err := runSweep(t, context.Background(), o, tg)
	if err != nil && len(r.Curve) == 0 {
		t.Fatal(err)
	}
	if len(r.Curve) == 0 || r.Curve[0].Status != result.StatusOK {
		t.Fatalf("curve %+v: want the first point measured", r.Curve)
	}
	if left := withEnv("CEILING_TEST_TAG", tag); len(left) > 0 {
		t.Errorf("%d daemon(s) of %d points outlived the run: %v", len(left), len(r.Curve), left)
	}
	for _, p := range r.Curve {
		if len(p.Escaped) > 0 {
			t.Errorf("point %d: escaped %v; the daemon stayed in the supervisor's tree", p.Index, p.Escaped)
		}
	}
}

// (b) A process that escaped the tree anyway (started for the server by
// something outside it, as a service manager would) is killed after its
// point and reported in the result, with a warning.
func TestEscapedProcessInResult(t *testing.T) {
	needProcs(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "spawn")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The spawner is the test's child, not the harness's: what it starts
	// is outside every supervisor's tree and cgroup.
	// (Its blocking open of the FIFO fails with EINTR when a sleep it
	// started is killed: it tries again.)
	spawner := exec.Command("/bin/sh", "-c", `while [ -p "$0" ]; do read m < "$0" && `+supervise.MarkerEnv+`="$m" sleep 300 & wait $!; done`, fifo)
	spawner.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := spawner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-spawner.Process.Pid, syscall.SIGKILL); _ = spawner.Wait() })
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {2}})
	tg := refTarget(t)
	tg.Command = []string{"/bin/sh", "-c", `printf '%s\n' "$` + supervise.MarkerEnv + `" > ` + fifo + `; exec ` + shellJoin(tg.Command)}
	r, _, err := runSweep(t, context.Background(), o, tg)
	if err != nil && len(r.Curve) == 0 {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range r.Curve {
		if p.Status != result.StatusOK {
			continue
		}
		if len(p.Escaped) != 1 || p.Escaped[0].Command != "sleep" {
			t.Errorf("point %d: escaped %+v, want the one spawned sleep", p.Index, p.Escaped)
			continue
		}
		pids = append(pids, p.Escaped[0].Pid)
		found := false
		for _, w := range r.Warnings {
			found = found || strings.HasPrefix(w, "point "+strconv.Itoa(p.Index)+": 1 process(es) escaped the supervisor") && strings.Contains(w, strconv.Itoa(p.Escaped[0].Pid))
		}
		if !found {
			t.Errorf("no warning for point %d's escaped process in %q", p.Index, r.Warnings)
		}
	}
	if len(pids) == 0 {
		t.Fatalf("no point measured: %+v", r.Curve)
	}
	// The document with its escaped processes is one publish accepts
	// (sweep.schema.json: escaped[].pid, escaped[].command).
	data, err := os.ReadFile(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"escaped": [`) {
		t.Errorf("the written document has no escaped list")
	}
	if _, err := publish.Read(data, o.Out); err != nil {
		t.Errorf("publish.Read rejects the document: %v", err)
	}
	bad := strings.Replace(string(data), `"command": "sleep"`, `"command": 7`, 1)
	if _, err := publish.Read([]byte(bad), o.Out); err == nil || !strings.Contains(err.Error(), "escaped[0].command") {
		t.Errorf("publish.Read of an escaped command that is no string: %v, want an error naming escaped[0].command", err)
	}
	for _, pid := range pids {
		if supervise.Alive(pid) {
			t.Errorf("escaped process %d still alive after the run", pid)
		}
	}
}

// (d) The headroom probe's cgroup after a SIGKILL of the harness: the
// generator's supervisor, told by the parent-death signal, stops its tree
// and removes the cgroups; what it could not remove, the next run does.
func TestSIGKILLDuringHeadroomProbeLeavesNoCgroup(t *testing.T) {
	needProcs(t)
	testenv.NeedRoot(t, "the headroom probe writes to the cgroup tree")
	// The probe follows a clean headline only: a sweep whose headline
	// ran on contended CPUs ends first, and is run again (as
	// retryContended does), at most quietAttempts times in all.
	var cmd *exec.Cmd
	var exited chan struct{}
	for attempt := 1; ; attempt++ {
		dir := t.TempDir()
		cmd = sweepWith(t, dir, refTarget(t), "--batch-ladder", "10", "--conns-ladder", "10=2", "--duration", "3s", "--headroom-probe", "0.5")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited = make(chan struct{})
		go func(c *exec.Cmd, done chan struct{}) { _ = c.Wait(); close(done) }(cmd, exited)
		t.Cleanup(func(c *exec.Cmd, done chan struct{}) func() {
			return func() { _ = c.Process.Kill(); <-done }
		}(cmd, exited))
		if reachPoint(t, dir, "point-*-headroom_probe-*", exited) {
			break
		}
		if attempt == quietAttempts {
			notQuiet(t, "the sweep ended before its headroom probe %d times (no clean headline on this machine now)", attempt)
		}
		t.Logf("attempt %d of %d ended before its headroom probe (no clean headline), trying again", attempt, quietAttempts)
		testenv.WaitForSteal(t, quietStealPct)
	}
	owner := strconv.Itoa(cmd.Process.Pid) + "."
	cgroups := func() []string {
		var out []string
		for _, p := range pinning.CgroupParents() {
			m, _ := filepath.Glob(filepath.Join(p.Dir, "ceiling-*-"+owner+"*"))
			out = append(out, m...)
		}
		return out
	}
	before := cgroups()
	hasHeadroom := false
	for _, c := range before {
		hasHeadroom = hasHeadroom || strings.Contains(filepath.Base(c), "headroom")
	}
	if !hasHeadroom {
		t.Fatalf("no headroom cgroup of harness %d during its probe: %v", cmd.Process.Pid, before)
	}
	t.Logf("cgroups during the probe: %v", before)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	killed := time.Now()
	waitNone(t, cmd.Process.Pid, 10*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for len(cgroups()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := cgroups(); len(left) > 0 {
		t.Errorf("cgroups left %s after the SIGKILL: %v", time.Since(killed).Round(time.Millisecond), left)
	}
	t.Logf("processes and cgroups gone %s after the SIGKILL", time.Since(killed).Round(time.Millisecond))
}

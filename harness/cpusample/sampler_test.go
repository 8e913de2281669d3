//go:build e2e

package cpusample

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/pinning"
)

// window is how long each test samples: a few intervals, short enough for
// a shared 2-core machine.
const window = 1500 * time.Millisecond

func startShell(t *testing.T, script string, cpus pinning.CPUSet) *supervise.Proc {
	t.Helper()
	p, err := supervise.Start(context.Background(), supervise.Spec{
		Name: "sampled", Path: "/bin/sh", Args: []string{"-c", script}, CPUs: cpus,
		LogPath: filepath.Join(t.TempDir(), "sampled.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(time.Second) })
	return p
}

func lastCPU(t *testing.T) pinning.CPUSet {
	t.Helper()
	online, err := pinning.Online()
	if err != nil {
		t.Skip(err)
	}
	return pinning.CPUSet{online[len(online)-1]}
}

// measure samples root's tree (or root alone) for window and checks the
// figures against what /proc says the same processes used over the same
// window. /proc is read independently around Start and Stop, outside and
// inside each, so the sampler's window lies between the two readings
// however long Start and Stop take on a loaded machine: a fixed tolerance
// around one reading raced the sampler's own reads.
func measure(t *testing.T, root int, treeWide bool) Stats {
	t.Helper()
	src := PIDs(root)
	if treeWide {
		src = Tree(root)
	}
	outerBefore := cpuSeconds(t, root, treeWide)
	s := Start(context.Background(), 250*time.Millisecond, src)
	innerBefore := cpuSeconds(t, root, treeWide)
	time.Sleep(window)
	innerAfter := cpuSeconds(t, root, treeWide)
	st := s.Stop()
	outerAfter := cpuSeconds(t, root, treeWide)
	// Two reads of 10 ms ticks each side: 0.02 s of resolution.
	lo, hi := innerAfter-innerBefore-0.02, outerAfter-outerBefore+0.02
	t.Logf("%+v; /proc says %.2fs..%.2fs", st, lo, hi)
	if st.Samples < 3 {
		t.Errorf("%d samples in %s at 250ms, want >= 3", st.Samples, window)
	}
	if st.WallSeconds < window.Seconds() {
		t.Errorf("wall %.3fs, want >= %s", st.WallSeconds, window)
	}
	if got := st.UserSeconds + st.SystemSeconds; got < lo-1e-9 || got > hi+1e-9 {
		t.Errorf("sampler counts %.2f CPU seconds, /proc %.2fs..%.2fs over the same window", got, lo, hi)
	}
	if want := (st.UserSeconds + st.SystemSeconds) / st.WallSeconds; st.MeanCores != want {
		t.Errorf("mean %.3f cores != cpu/wall %.3f", st.MeanCores, want)
	}
	if st.P95Cores < st.MeanCores*0.9 {
		t.Errorf("p95 %.2f below the mean %.2f", st.P95Cores, st.MeanCores)
	}
	if again := s.Stop(); again != st {
		t.Errorf("second Stop = %+v, want the first's %+v", again, st)
	}
	return st
}

// The machine is shared: a busy loop may get much less than its core
// while others build. The exact check is the agreement with /proc in
// measure; the bounds on cores here are loose, except the ceiling: a
// process pinned to one CPU cannot use more than one core.
func testBusyPinnedChildReadsNearOneCore(t *testing.T) {
	p := startShell(t, "while :; do :; done", lastCPU(t))
	st := measure(t, p.TargetPid(), true)
	if st.MeanCores < 0.05 || st.MeanCores > 1.05 || st.P95Cores > 1.2 {
		t.Errorf("mean %.2f / p95 %.2f cores for a busy loop pinned to one cpu, want mean 0.05..1.05 (near 1 on an idle machine), p95 <= 1.2", st.MeanCores, st.P95Cores)
	}
	if st.MeanCores < 0.5 {
		t.Logf("busy loop got only %.2f of its core: the machine is loaded", st.MeanCores)
	}
	if m, _ := st.Fraction(1); m != st.MeanCores {
		t.Errorf("fraction of 1 core %.2f != mean %.2f", m, st.MeanCores)
	}
}

func testIdleChildReadsNearZero(t *testing.T) {
	p := startShell(t, "exec sleep 60", nil)
	waitComm(t, p.TargetPid(), "sleep") // start-up (trampoline, exec) is not idle
	st := measure(t, p.TargetPid(), true)
	if st.MeanCores >= 0.2 || st.P95Cores >= 0.2 {
		t.Errorf("idle process reads mean %.2f / p95 %.2f cores, want < 0.2", st.MeanCores, st.P95Cores)
	}
	if st.Processes != 1 {
		t.Errorf("saw %d processes, want 1", st.Processes)
	}
	if st.RunDelaySeconds > 0.1 {
		t.Errorf("a sleeping process waited %.3fs for a CPU", st.RunDelaySeconds)
	}
}

func testTreeIncludesChildren(t *testing.T) {
	// The root shell only waits; its child spins.
	p := startShell(t, "sh -c 'while :; do :; done' & wait", nil)
	root := measure(t, p.TargetPid(), false)
	tree := measure(t, p.TargetPid(), true)
	if root.MeanCores >= 0.05 {
		t.Errorf("waiting root alone reads %.2f cores, want < 0.05", root.MeanCores)
	}
	if tree.MeanCores < 0.05 || tree.Processes != 2 {
		t.Errorf("tree reads %.2f cores over %d processes, want the spinning child's (>= 0.05) over 2", tree.MeanCores, tree.Processes)
	}
}

func testExitedChildKeepsItsCPU(t *testing.T) {
	// A child does a fixed amount of work and exits while the root lives
	// on. Once the child has been reaped, the root's cutime+cstime is the
	// ground truth of what it used; the sampler, which only keeps each
	// process's last-seen times, may miss at most about the last interval
	// (100 ms here) before the child's exit. A sampler that dropped gone
	// processes would miss nearly all of it.
	gate := filepath.Join(t.TempDir(), "go")
	p := startShell(t, `while [ ! -e "`+gate+`" ]; do sleep 0.02; done
		sh -c 'i=0; while [ $i -lt 600000 ]; do i=$((i+1)); done'
		echo spun; exec sleep 60`, nil)
	s := Start(context.Background(), 100*time.Millisecond, Tree(p.TargetPid()))
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := supervise.WaitReady(context.Background(), p, mustLog(t, "spun"), time.Minute); err != nil {
		t.Fatal(err)
	}
	st := s.Stop()
	truth := childCPUSeconds(t, p.TargetPid())
	got := st.UserSeconds + st.SystemSeconds
	t.Logf("%+v; reaped children used %.2fs", st, truth)
	if truth < 0.3 {
		t.Fatalf("the worker used %.2fs of CPU; too little to tell", truth)
	}
	if got < truth-0.15 || got > truth+0.1 {
		t.Errorf("window holds %.2f CPU seconds; the reaped children used %.2fs (allowed: -0.15s..+0.1s)", got, truth)
	}
	if st.Processes < 2 {
		t.Errorf("saw %d processes, want the root and the worker at least", st.Processes)
	}
}

// childCPUSeconds is cutime+cstime of pid: the CPU of the children it
// reaped (fields 16 and 17 of /proc/PID/stat, in USER_HZ = 100 ticks).
func childCPUSeconds(t *testing.T, pid int) float64 {
	t.Helper()
	f := statFields(t, pid)
	cu, err1 := strconv.ParseFloat(f[13], 64)
	cs, err2 := strconv.ParseFloat(f[14], 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("stat fields %v", f[13:15])
	}
	return (cu + cs) / 100
}

func testContextEndStopsSampling(t *testing.T) {
	p := startShell(t, "exec sleep 60", nil)
	ctx, cancel := context.WithCancel(context.Background())
	s := Start(ctx, 50*time.Millisecond, Tree(p.TargetPid()))
	cancel()
	<-s.done
	st := s.Stop()
	if st.Processes != 1 || st.WallSeconds <= 0 {
		t.Errorf("after ctx end: %+v", st)
	}
}

func testGoneProcessReadsNothing(t *testing.T) {
	p := startShell(t, "exit 0", nil)
	<-p.Done()
	s := Start(context.Background(), 50*time.Millisecond, Tree(p.TargetPid()))
	time.Sleep(120 * time.Millisecond)
	if st := s.Stop(); st.Processes != 0 || st.MeanCores != 0 {
		t.Errorf("sampling a gone pid: %+v, want nothing seen", st)
	}
}

func mustLog(t *testing.T, re string) supervise.Probe {
	t.Helper()
	pr, err := supervise.ParseProbe("log:" + re)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

// cpuSeconds is utime+stime (fields 14 and 15 of /proc/PID/stat, USER_HZ
// 100) of pid, and of its descendants when treeWide.
func cpuSeconds(t *testing.T, pid int, treeWide bool) float64 {
	t.Helper()
	pids := []int{pid}
	if treeWide {
		kids, err := supervise.Descendants(pid)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, kids...)
	}
	var sum float64
	for _, p := range pids {
		f := statFields(t, p)
		u, err1 := strconv.ParseFloat(f[11], 64)
		s, err2 := strconv.ParseFloat(f[12], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("stat fields %v", f[11:13])
		}
		sum += (u + s) / 100
	}
	return sum
}

// statFields returns /proc/PID/stat's fields from the state on (field 3
// is index 0).
func statFields(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
}

func testRunDelayOfThreadsSharingOneCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/schedstat"); err != nil {
		t.Skip("kernel without schedstat")
	}
	// Two busy loops pinned to one CPU: each waits while the other runs,
	// so together they wait about the whole window. More load on the
	// machine only adds waiting, so the lower bound is robust.
	p := startShell(t, "while :; do :; done & while :; do :; done", lastCPU(t))
	st := measure(t, p.TargetPid(), true)
	if st.RunDelaySeconds < 0.3*st.WallSeconds {
		t.Errorf("two loops on one cpu waited %.2fs in a %.2fs window, want >= 30%%", st.RunDelaySeconds, st.WallSeconds)
	}
	if st.MeanCores > 1.05 {
		t.Errorf("two loops pinned to one cpu read %.2f cores", st.MeanCores)
	}
}

// waitComm waits until pid runs the program named comm (past the
// trampoline's exec).
func waitComm(t *testing.T, pid int, comm string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); string(b) == comm+"\n" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("pid %d never ran %s", pid, comm)
}

// A Group samples several trees at the same instants: each part reads
// its own process (the spinning one busy, the sleeping one idle), and
// the total is their sum, second for second, with the intervals summed
// (so its p95 is at most the parts' p95s added up).
func testGroupTotalIsTheSumOfItsParts(t *testing.T) {
	busy := startShell(t, "while :; do :; done", lastCPU(t))
	idle := startShell(t, "exec sleep 60", nil)
	waitComm(t, idle.TargetPid(), "sleep")
	g := StartGroup(context.Background(), 250*time.Millisecond, Tree(busy.TargetPid()), Tree(idle.TargetPid()))
	time.Sleep(window)
	total, parts := g.Stop()
	t.Logf("total %+v\nparts %+v", total, parts)
	if len(parts) != 2 {
		t.Fatalf("%d parts, want 2", len(parts))
	}
	if parts[0].MeanCores < 0.05 || parts[1].MeanCores >= 0.2 {
		t.Errorf("busy part %.2f cores, idle part %.2f: want >= 0.05 and < 0.2", parts[0].MeanCores, parts[1].MeanCores)
	}
	near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
	if !near(total.UserSeconds, parts[0].UserSeconds+parts[1].UserSeconds) ||
		!near(total.SystemSeconds, parts[0].SystemSeconds+parts[1].SystemSeconds) ||
		!near(total.MeanCores, parts[0].MeanCores+parts[1].MeanCores) {
		t.Errorf("total %+v is not the sum of %+v", total, parts)
	}
	if total.Samples != parts[0].Samples || total.Samples < 3 || total.Processes != 2 || total.WallSeconds != parts[0].WallSeconds {
		t.Errorf("total: %d samples, %d processes, wall %v; parts %+v", total.Samples, total.Processes, total.WallSeconds, parts)
	}
	if total.P95Cores > parts[0].P95Cores+parts[1].P95Cores+1e-9 || total.P95Cores < parts[0].P95Cores-1e-9 {
		t.Errorf("total p95 %.3f outside [%.3f, %.3f]", total.P95Cores, parts[0].P95Cores, parts[0].P95Cores+parts[1].P95Cores)
	}
	if t2, p2 := g.Stop(); t2 != total || len(p2) != 2 || p2[0] != parts[0] {
		t.Errorf("second Stop differs")
	}
}

// TestSampler: the sampler over real processes on this machine: a busy
// pinned child reads about one core and an idle one about none, a tree
// counts its children, a child that exited keeps the CPU it used, the
// sampling ends with its context and reads nothing of a process gone
// before it, two threads sharing a CPU show their run delay, and a
// group's total is the sum of its parts.
func TestSampler(t *testing.T) {
	t.Run("busy pinned child reads near one core", testBusyPinnedChildReadsNearOneCore)
	t.Run("idle child reads near zero", testIdleChildReadsNearZero)
	t.Run("tree includes children", testTreeIncludesChildren)
	t.Run("exited child keeps its CPU", testExitedChildKeepsItsCPU)
	t.Run("context end stops sampling", testContextEndStopsSampling)
	t.Run("gone process reads nothing", testGoneProcessReadsNothing)
	t.Run("run delay of threads sharing one CPU", testRunDelayOfThreadsSharingOneCPU)
	t.Run("group total is the sum of its parts", testGroupTotalIsTheSumOfItsParts)
}

//go:build e2e

package nodegen

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/attrib"
	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
)

// The agreement point: echo, closed loop, against refserver held to
// serverQuota of one CPU (a CFS quota, pinning.NewThrottle), pinned apart
// from the generator as a sweep pins them. Either generator needs little
// CPU to saturate a server so small (the Node one about 0.2 CPU, `ceiling
// load` about 0.05: each logs its own), so the server is the bottleneck
// for both and the two measure its ceiling under their client patterns.
//
// The two are measured at once, not one after the other: two refservers,
// each held to its own quota, share the server CPU, and each generator
// drives one of them, the servers swapped each pair. This VM's speed
// drifts by 20-30% within a minute (pairs measured back to back read
// node/ceiling anywhere from 0.58 to 1.15 in one fresh-clone run of 6 Dec
// 2026), and whatever the host does to the CPUs in a window it does to
// both servers alike.
const (
	serverQuota = 0.15
	agreeConns  = 16
	agreeBatch  = 10
	agreeSize   = 256
	agreeWarmup = time.Second
	agreeWindow = 3 * time.Second
	// agreeSlack: each generator runs this much longer than the window
	// the test measures both in, which starts once both are measuring
	// (their markers), so a generator that starts a little later than
	// the other is still under load at the window's end.
	agreeSlack   = 2 * time.Second
	agreeRepeats = 4 // pairs, both generators at once, the servers swapped each pair

	// countTolerance: each generator's msg/s must match the server's own
	// count of the messages it received over the same window
	// (refserver_messages_received_total read at the generator's marker
	// and after it exited) within this. This is the agreement that holds
	// on any host: two generators that share nothing count what the
	// server counts, so neither figure is wrong about what happened.
	countTolerance = 0.05
	// attempts: the test judges node/ceiling pair by pair (the two
	// generators measured at once, so a machine that drifts moves both),
	// over the pairs of every attempt so far: the median pair at most
	// 1.10 passes; the median and at least three quarters of the pairs
	// above 1.10 fail, once two attempts' pairs say so (one attempt's
	// four pairs, 0.94 1.18 1.27 1.29, read beyond the bound on a day
	// whose next attempt read 0.92 0.94 0.94 1.38 with nothing else on
	// the CPUs: a VM that drifts within an attempt must not fail the
	// test, a real bias fails it on every attempt); anything else cannot
	// tell, and the test measures again, at most this many times in all,
	// then fails under CI=true (skips elsewhere) naming what else ran on
	// the two CPUs.
	attempts = 3
	// serverBusy: the server used at least this fraction of its quota
	// over every window, the harness's server-saturated rule (90%).
	serverBusy = 0.90
)

// Both generators, `ceiling load` and the Node one, measure the same
// server-saturated point in pairs, at once; each counts what its server
// counts, and the median pair's node/ceiling is at most 1+crossTolerance
// (below 1-crossTolerance is logged). An attempt that cannot tell (the
// pairs on both sides of the bound, or a server short of its quota) is
// measured again, up to attempts times.
func TestAgreement(t *testing.T) {
	node := needNode(t)
	if testing.Short() {
		t.Skip("-short: measures six points")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the server's CPU quota is a Linux cgroup")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+"/", "../../../cmd/ceiling", "../../../cmd/refserver")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	// The servers on one CPU, the generators on another, as a sweep pins
	// them (SRV_CPUSET=1 LT_CPUSET=0 on two CPUs).
	online, err := pinning.Online()
	if err != nil || len(online) < 2 {
		t.Skipf("needs two CPUs to pin the servers and the generators apart (online %v, %v)", online, err)
	}
	srvCPUs, genCPUs := pinning.CPUSet{online[1]}, pinning.CPUSet{online[0]}
	var slots [2]slot
	for i := range slots {
		th, err := pinning.NewThrottle(supervise.CgroupName("nodegen", i), serverQuota) // a name a later sweep cleans up if this test dies
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("no CPU quota for the server (CI runs as root with cgroups): %v", err)
			}
			t.Skipf("no CPU quota for the server: %v", err)
		}
		t.Cleanup(func() {
			if err := th.Remove(); err != nil {
				t.Error(err)
			}
		})
		port, err := target.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		slots[i] = slot{name: string(rune('A' + i)), url: "ws://" + addr + "/echo", pid: startServer(t, th, srvCPUs, filepath.Join(bin, "refserver"), addr)}
	}

	gens := []generator{
		{"ceiling load", []string{filepath.Join(bin, "ceiling"), "load"}, load.IOBatchWake},
		{"node", []string{node, "gen.js"}, load.IOEager},
	}
	pool := agreement{gens: gens, tput: make([][]float64, len(gens)), perCPU: make([]float64, len(gens))}
	for attempt := 1; ; attempt++ {
		a := agreeOnce(t, gens, slots, srvCPUs, genCPUs)
		if a.noisy == "" {
			// A saturated attempt: its pairs join the pool.
			pool = pool.with(a)
			switch v := pool.verdict(); {
			case v > 0, v < 0 && pool.attempts > 1:
				pool.judge(t)
				return
			case v < 0:
				a.noisy = fmt.Sprintf("the pairs' node/ceiling %s lie beyond the %.0f%% bound in one attempt, which a second must confirm", pool.ratioList(), 100*crossTolerance)
			default:
				a.noisy = fmt.Sprintf("the pairs' node/ceiling %s lie on both sides of the %.0f%% bound", pool.ratioList(), 100*crossTolerance)
			}
		}
		who := a.foreign.String()
		if attempt == attempts {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true: %d attempts, none quiet enough to test a %.0f%% bound: %s; other work on the CPUs: %s", attempt, 100*crossTolerance, a.noisy, who)
			}
			t.Skipf("%d attempts, none quiet enough to test a %.0f%% bound: %s; other work on the CPUs: %s", attempt, 100*crossTolerance, a.noisy, who)
		}
		t.Logf("attempt %d cannot test the bound: %s; other work on the CPUs: %s; measuring again", attempt, a.noisy, who)
	}
}

// slot is one of the two servers.
type slot struct {
	name string // A or B, for the log
	url  string // its /echo
	pid  int
}

// agreeOnce measures agreeRepeats pairs, each generator on the other
// server each pair.
func agreeOnce(t *testing.T, gens []generator, slots [2]slot, srvCPUs, genCPUs pinning.CPUSet) agreement {
	t.Helper()
	a := agreement{gens: gens, tput: make([][]float64, len(gens)), perCPU: make([]float64, len(gens)), attempts: 1}
	for rep := 0; rep < agreeRepeats; rep++ {
		on := make([]slot, len(gens))
		for g := range gens {
			on[g] = slots[(g+rep)%len(slots)]
		}
		pts, foreign, skewed := measurePair(t, gens, on, srvCPUs, genCPUs)
		if skewed != "" && a.noisy == "" {
			a.noisy = fmt.Sprintf("pair %d: %s", rep, skewed)
		}
		if foreign.share >= a.foreign.share {
			a.foreign = foreign
		}
		for g, p := range pts {
			gen := gens[g]
			t.Logf("%-12s pair %d on server %s: %8.0f msg/s in the common window; over its own, %8.0f (the server counted %.0f); server %.3f of %.2f CPU, generator %.2f CPU, io_pattern %q",
				gen.name, rep, on[g].name, p.together, p.throughput, p.serverCounted, p.serverCPU, serverQuota, p.genCPU, p.pattern)
			if p.pattern != gen.pattern {
				t.Errorf("%s reported io_pattern %q, want %q", gen.name, p.pattern, gen.pattern)
			}
			if p.serverCPU < serverBusy*serverQuota && a.noisy == "" {
				a.noisy = fmt.Sprintf("%s pair %d: its server used %.3f CPU of its %.2f quota: not saturated, so the point measures something else",
					gen.name, rep, p.serverCPU, serverQuota)
			}
			if off := math.Abs(p.throughput-p.serverCounted) / p.serverCounted; off > countTolerance {
				t.Errorf("%s pair %d: reported %.0f msg/s, the server counted %.0f msg/s received over the same window: %.1f%% apart > %.0f%%",
					gen.name, rep, p.throughput, p.serverCounted, 100*off, 100*countTolerance)
			}
			a.tput[g] = append(a.tput[g], p.together)
			a.perCPU[g] += p.together / p.serverCPU / agreeRepeats
		}
	}
	return a
}

// judge fails the test when the generators disagree.
func (a agreement) judge(t *testing.T) {
	t.Helper()
	t.Logf("node/ceiling by pair: %s; median %.3f, bound %.0f%%", a.ratioList(), a.median(), 100*crossTolerance)
	t.Logf("messages per server CPU-second: ceiling load %.0f, node %.0f", a.perCPU[0], a.perCPU[1])
	if a.verdict() < 0 {
		t.Errorf("the Node client beats `ceiling load`: node/ceiling %.3f by the median pair (pairs %s), beyond %.0f%%: our client costs the server more",
			a.median(), a.ratioList(), 100*crossTolerance)
	}
	if m := a.median(); m < 1-crossTolerance {
		t.Logf("`ceiling load` measures %.0f%% above the Node client here: the server pays more for Node's eager reads (docs/efficiency.md); reported, not a failure", 100*(1/m-1))
	}
}

// foreignOn is the work outside the server and the generator that ran on
// cpus over a scan, the processes largest share first.
func foreignOn(rep attrib.Report, cpus []int) foreignShare {
	if rep.Err != nil {
		return foreignShare{who: "unknown (" + rep.Err.Error() + ")"}
	}
	sh := rep.Share(cpus)
	var names []string
	for _, n := range sh.Tasks {
		if len(names) == 3 || n.Fraction < 0.01 {
			break
		}
		names = append(names, fmt.Sprintf("%s (pid %d) %.0f%%", n.Comm, n.Pid, 100*n.Fraction))
	}
	f := foreignShare{share: sh.Foreign, who: fmt.Sprintf("foreign %.1f%%, kernel %.1f%% of the two CPUs", 100*sh.Foreign, 100*sh.Kernel)}
	if len(names) > 0 {
		f.who += ": " + strings.Join(names, ", ")
	}
	return f
}

// point is one generator's part of a pair.
type point struct {
	// together is its server's own count of messages received over the
	// window common to both generators, per second: what the pair
	// compares.
	together   float64
	serverCPU  float64 // its server's CPU over the common window, in CPUs
	throughput float64 // the generator's summary.throughput_per_s, over its own window
	genCPU     float64 // the generator's own account (generator.cpu_cores)
	// serverCounted is the server's count over the generator's own
	// window (from its marker until it exited), per second.
	serverCounted float64
	pattern       string // generator.io_pattern
}

// running is one generator process of a pair.
type running struct {
	argv      []string
	url       string
	marker    string
	out       string
	pid       int
	done      chan error
	stderr    *strings.Builder
	at        time.Time // when its marker was seen
	counted0  float64   // its server's count then
	measuring bool
}

// measurePair runs every generator at once, each against its slot's
// server, with the harness's flags. Once all of them measure (their
// markers), the test reads each server's count and samples its CPU over
// agreeWindow; it also reads each server's count over its generator's
// own window, for the count check.
//
// skewed is why the pair cannot be compared when the generators started
// measuring so far apart that the common window may run past the first
// one's load; "" otherwise.
func measurePair(t *testing.T, gens []generator, on []slot, srvCPUs, genCPUs pinning.CPUSet) (pts []point, foreign foreignShare, skewed string) {
	t.Helper()
	runs := make([]*running, len(gens))
	for g, gen := range gens {
		dir := t.TempDir()
		r := &running{argv: gen.argv, url: on[g].url, marker: filepath.Join(dir, "marker"), out: filepath.Join(dir, "load.json"), done: make(chan error, 1), stderr: &strings.Builder{}}
		args := append(append([]string(nil), gen.argv[1:]...),
			"--scenario", "echo", "--url", r.url, "--connections", strconv.Itoa(agreeConns),
			"--batch", strconv.Itoa(agreeBatch), "--record-size", strconv.Itoa(agreeSize),
			"--duration", (agreeWindow + agreeSlack).String(), "--warmup", agreeWarmup.String(),
			"--connect-strategy", "bounded", "--connect-concurrency", "32",
			"--measure-marker", r.marker, "--json", r.out, "--quiet")
		// As the harness runs a generator: pinned, with GOMAXPROCS the
		// size of its CPU set (node ignores it: one JavaScript thread
		// either way).
		cmd := pinning.Command(pinning.Spec{CPUs: genCPUs}, gen.argv[0], args...)
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(len(genCPUs)))
		cmd.Stderr = r.stderr
		c, err := pinning.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		r.pid = c.Pid()
		go func() { r.done <- c.Wait() }()
		kill := time.AfterFunc(agreeWarmup+agreeWindow+agreeSlack+45*time.Second, func() { _ = cmd.Process.Kill() })
		defer kill.Stop()
		runs[g] = r
	}

	// Each generator's window starts at its marker; the common window
	// once every one has started.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		all := true
		for _, r := range runs {
			if !r.measuring {
				if _, err := os.Stat(r.marker); err == nil {
					r.measuring, r.at, r.counted0 = true, time.Now(), serverReceived(t, r.url)
				}
			}
			all = all && r.measuring
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			for _, r := range runs {
				if !r.measuring {
					t.Fatalf("%s: no marker within 30 s\n%s", r.argv[0], r.stderr.String())
				}
			}
		}
	}
	var first, last time.Time
	for i, r := range runs {
		if i == 0 || r.at.Before(first) {
			first = r.at
		}
		if r.at.After(last) {
			last = r.at
		}
	}
	if skew := last.Sub(first); skew > agreeSlack/2 {
		skewed = fmt.Sprintf("the generators started measuring %v apart: the common window may run past the first one's load (slack %v)", skew, agreeSlack)
	}
	samplers := make([]*cpusample.Sampler, len(runs))
	var srvPids, genPids []int
	for g, r := range runs {
		samplers[g] = cpusample.Start(context.Background(), 0, cpusample.PIDs(on[g].pid))
		srvPids, genPids = append(srvPids, on[g].pid), append(genPids, r.pid)
	}
	scan := attrib.Start(context.Background(), 250*time.Millisecond, attrib.Roots{Server: srvPids, Generator: genPids, Harness: os.Getpid()})
	m0 := make([]float64, len(runs))
	for g, r := range runs {
		m0[g] = serverReceived(t, r.url)
	}
	t0 := time.Now()
	time.Sleep(agreeWindow)
	m1 := make([]float64, len(runs))
	for g, r := range runs {
		m1[g] = serverReceived(t, r.url)
	}
	t1 := time.Now()
	pts = make([]point, len(runs))
	for g := range runs {
		pts[g].together = (m1[g] - m0[g]) / t1.Sub(t0).Seconds()
		pts[g].serverCPU = samplers[g].Stop().MeanCores
	}
	foreign = foreignOn(scan.Stop(), append(srvCPUs.Ints(), genCPUs.Ints()...))

	for g, r := range runs {
		if err := <-r.done; err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(r.argv, " "), err, r.stderr.String())
		}
		// The generator stopped sending at its window's end; what it
		// had in flight then (at most connections x batch) is all the
		// server counted since.
		counted := serverReceived(t, r.url) - r.counted0
		res := readResult(t, r.out)
		if res.Summary.Errors != 0 || res.Summary.Failure != "" {
			t.Fatalf("%s: %d errors %v %s", r.argv[0], res.Summary.Errors, res.Summary.ErrorsByReason, res.Summary.Failure)
		}
		pts[g].throughput, pts[g].genCPU, pts[g].pattern = res.Summary.ThroughputPerS, res.Generator.CPUCores, res.Generator.IOPattern
		pts[g].serverCounted = counted / (agreeWindow + agreeSlack).Seconds()
	}
	return pts, foreign, skewed
}

// serverReceived reads refserver's own count of messages received from
// its /metrics (the server at the ws:// URL's host).
func serverReceived(t *testing.T, wsURL string) float64 {
	t.Helper()
	host := strings.TrimPrefix(wsURL, "ws://")
	host = host[:strings.IndexByte(host, '/')]
	resp, err := http.Get("http://" + host + "/metrics")
	if err != nil {
		t.Fatalf("refserver /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("refserver /metrics: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "refserver_messages_received_total "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("refserver /metrics: %q: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("refserver /metrics has no refserver_messages_received_total:\n%s", b)
	return 0
}

// startServer runs refserver at addr inside the throttle's cgroup from its
// first instruction, until the test ends; it returns its pid.
func startServer(t *testing.T, th *pinning.Throttle, cpus pinning.CPUSet, path, addr string) int {
	t.Helper()
	c, err := pinning.Start(pinning.Command(pinning.Spec{CPUs: cpus, Cgroup: th.Path}, path, "--addr", addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			_ = c.Cmd.Process.Kill()
			<-c.Done()
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c.Pid()
			}
		}
		select {
		case <-c.Done():
			t.Fatalf("refserver exited: %v", c.Wait())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("refserver not ready at %s within 10 s: %v", addr, err)
		}
	}
}

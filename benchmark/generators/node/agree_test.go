//go:build validate

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

	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/pinning"
)

// The agreement point: echo, closed loop, against refserver held to
// serverQuota of one CPU (a CFS quota, pinning.NewThrottle), pinned apart
// from the generator as a sweep pins them. Either generator needs far less
// CPU than that to saturate a server so small (the Node one costs about
// twice refserver's CPU per message: about 0.13 CPU here, `ceiling load`
// about 0.07), so the server is the bottleneck for both and the two must
// measure the same ceiling.
const (
	serverQuota  = 0.15
	agreeConns   = 16
	agreeBatch   = 10
	agreeSize    = 256
	agreeWarmup  = time.Second
	agreeWindow  = 3 * time.Second
	agreeRepeats = 3 // per generator, alternating: A B A B A B

	// countTolerance: each generator's msg/s must match the server's own
	// count of the messages it received over the same window
	// (refserver_messages_received_total read at the marker and at the
	// window's end) within this, or the repeats' spread if larger. This is
	// the agreement that holds: two generators that share nothing count
	// what the server counts.
	countTolerance = 0.05
	// crossTolerance bounds the difference between the two generators'
	// ceilings. It is NOT the noise floor: at this point the server itself
	// handles more messages per CPU-second under the Node client (the
	// same 0.2 reads and 1 write per message at the server, so the
	// difference is in the kernel's TCP path below the syscalls, which
	// follows the client's timing). Measured on a quiet machine, 30 Nov
	// 2026: node/ceiling 1.15 to 1.22 with repeats 1-2% apart, and 1.21
	// without the quota with each side's figure equal to the server's
	// count. docs/generators.md reports it as an open finding; this bound
	// only catches a gross miscount (a window that takes in the warm-up:
	// 1.3x, 2x).
	crossTolerance = 0.30
	// serverBusy: the server used at least this fraction of its quota
	// over every window, the harness's server-saturated rule (90%).
	serverBusy = 0.90
)

// Both generators, `ceiling load` and the Node one, measure the same
// server-saturated point in alternating repeats; their means differ by no
// more than the noise floor (the larger relative spread, max-min over
// mean, of either generator's own repeats) or minTolerance.
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
	th, err := pinning.NewThrottle(supervise.CgroupName("nodegen", 0), serverQuota) // a name a later sweep cleans up if this test dies
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
	// The server on one CPU, the generators on another, as a sweep pins
	// them (SRV_CPUSET=1 LT_CPUSET=0 on two CPUs).
	online, err := pinning.Online()
	if err != nil || len(online) < 2 {
		t.Skipf("needs two CPUs to pin the server and the generator apart (online %v, %v)", online, err)
	}
	srvCPUs, genCPUs := pinning.CPUSet{online[1]}, pinning.CPUSet{online[0]}
	port, err := target.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	srv := startServer(t, th, srvCPUs, filepath.Join(bin, "refserver"), addr)

	gens := []struct {
		name string
		argv []string
	}{
		{"ceiling load", []string{filepath.Join(bin, "ceiling"), "load"}},
		{"node", []string{node, "gen.js"}},
	}
	tput := make([][]float64, len(gens))
	perCPU := make([]float64, len(gens))
	for rep := 0; rep < agreeRepeats; rep++ {
		for g, gen := range gens {
			p := measure(t, gen.argv, "ws://"+addr+"/echo", srv, genCPUs)
			t.Logf("%-12s rep %d: %8.0f msg/s (the server counted %.0f), server %.3f of %.2f CPU, generator %.2f CPU",
				gen.name, rep, p.throughput, p.serverCounted, p.serverCPU, serverQuota, p.genCPU)
			if p.serverCPU < serverBusy*serverQuota {
				msg := fmt.Sprintf("%s rep %d: the server used %.3f CPU of its %.2f quota: not saturated, so the point measures something else (contention on this machine?)",
					gen.name, rep, p.serverCPU, serverQuota)
				if os.Getenv("CI") == "true" {
					t.Fatal(msg)
				}
				t.Skip(msg)
			}
			if off := math.Abs(p.throughput-p.serverCounted) / p.serverCounted; off > countTolerance {
				t.Errorf("%s rep %d: reported %.0f msg/s, the server counted %.0f msg/s received over the window: %.1f%% apart > %.0f%%",
					gen.name, rep, p.throughput, p.serverCounted, 100*off, 100*countTolerance)
			}
			tput[g] = append(tput[g], p.throughput)
			perCPU[g] += p.throughput / p.serverCPU
		}
	}
	noise := 0.0
	means := make([]float64, len(gens))
	for g := range gens {
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for _, x := range tput[g] {
			lo, hi, sum = min(lo, x), max(hi, x), sum+x
		}
		means[g] = sum / float64(len(tput[g]))
		noise = max(noise, (hi-lo)/means[g])
	}
	diff := math.Abs(means[0]-means[1]) / ((means[0] + means[1]) / 2)
	tol := max(noise, crossTolerance)
	t.Logf("mean: ceiling load %.0f msg/s, node %.0f msg/s (node/ceiling %.3f); difference %.1f%%, noise floor %.1f%%, tolerance %.1f%%",
		means[0], means[1], means[1]/means[0], 100*diff, 100*noise, 100*tol)
	t.Logf("messages per server CPU-second: ceiling load %.0f, node %.0f", perCPU[0]/agreeRepeats, perCPU[1]/agreeRepeats)
	if diff > tol {
		t.Errorf("the generators disagree grossly: ceiling load %.0f msg/s, node %.0f msg/s, %.1f%% apart > %.1f%% (noise floor %.1f%%, bound %.0f%%)",
			means[0], means[1], 100*diff, 100*tol, 100*noise, 100*crossTolerance)
	}
}

// point is one measured point.
type point struct {
	throughput float64 // the generator's summary.throughput_per_s
	serverCPU  float64 // the server's CPU over the window, in CPUs
	genCPU     float64 // the generator's own account (generator.cpu_cores)
	// serverCounted is the server's own count of messages received over
	// the window (its /metrics), per second.
	serverCounted float64
}

// measure runs one generator with the harness's flags and samples the
// server's CPU from the generator's marker over the window.
func measure(t *testing.T, argv []string, url string, srv int, genCPUs pinning.CPUSet) point {
	t.Helper()
	dir := t.TempDir()
	marker, out := filepath.Join(dir, "marker"), filepath.Join(dir, "load.json")
	args := append(append([]string(nil), argv[1:]...),
		"--scenario", "echo", "--url", url, "--connections", strconv.Itoa(agreeConns),
		"--batch", strconv.Itoa(agreeBatch), "--record-size", strconv.Itoa(agreeSize),
		"--duration", agreeWindow.String(), "--warmup", agreeWarmup.String(),
		"--connect-strategy", "bounded", "--connect-concurrency", "32",
		"--measure-marker", marker, "--json", out, "--quiet")
	// As the harness runs a generator: pinned, with GOMAXPROCS the size
	// of its CPU set (node ignores it: one JavaScript thread either way).
	cmd := pinning.Command(pinning.Spec{CPUs: genCPUs}, argv[0], args...)
	cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(len(genCPUs)))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	c, err := pinning.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	kill := time.AfterFunc(agreeWarmup+agreeWindow+45*time.Second, func() { _ = cmd.Process.Kill() })
	defer kill.Stop()

	// The server's CPU over the window, sampled as the harness does.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no marker within 30 s\n%s", argv[0], stderr.String())
		}
	}
	sampler := cpusample.Start(context.Background(), 0, cpusample.PIDs(srv))
	m0, t0 := serverReceived(t, url), time.Now()
	time.Sleep(agreeWindow)
	m1, t1 := serverReceived(t, url), time.Now()
	cpu := sampler.Stop().MeanCores
	if err := <-done; err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, stderr.String())
	}
	r := readResult(t, out)
	if r.Summary.Errors != 0 || r.Summary.Failure != "" {
		t.Fatalf("%s: %d errors %v %s", argv[0], r.Summary.Errors, r.Summary.ErrorsByReason, r.Summary.Failure)
	}
	return point{throughput: r.Summary.ThroughputPerS, serverCPU: cpu, genCPU: r.Generator.CPUCores,
		serverCounted: (m1 - m0) / t1.Sub(t0).Seconds()}
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

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"
)

// echoPoint is one batch size against refserver /echo. CPU figures are the
// kernel's accounting of each process over the same interval inside the
// generator's measured window.
type echoPoint struct {
	batch         int
	ratePerS      float64 // messages echoed per second (generator's count)
	gen, srv      cpuTimes
	sampledS      float64 // length of the CPU sampling interval
	readsPerMsg   float64 // generator read syscalls per message; <0 unknown
	errors        int64
	errorDetail   string
	generatorName string
}

func (p echoPoint) perMsg(d time.Duration) string {
	msgs := p.ratePerS * p.sampledS
	if d == 0 {
		// No tick landed: below one tick's worth per message, not zero.
		return fmt.Sprintf("<%.0f", float64(time.Second/userHZ)/msgs)
	}
	return fmt.Sprintf("%.0f", float64(d.Nanoseconds())/msgs)
}

// userRatio is generator user CPU over refserver's, with a tick's bound
// when no user tick landed on the generator.
func (p echoPoint) userRatio() string {
	if p.srv.user == 0 {
		return "n/a"
	}
	if p.gen.user == 0 {
		return fmt.Sprintf("<%.2f", float64(time.Second/userHZ)/float64(p.srv.user))
	}
	return fmt.Sprintf("%.2f", float64(p.gen.user)/float64(p.srv.user))
}

func echoSection(o options, stdout io.Writer, self string, pl placement) error {
	o, useCeiling, err := echoOptions(o)
	if err != nil {
		return err
	}

	srv, addr, stop, err := startRefserver(o, pl)
	if err != nil {
		return err
	}
	defer stop()
	url := "ws://" + addr + "/echo"

	t := newEchoTable(stdout, o, pl)
	if err := t.measure(o, pl, srv, self, url, useCeiling); err != nil {
		return err
	}
	t.write(stdout)
	return nil
}

// echoOptions sets the section's window, makes the ceiling binaries'
// paths absolute, and reports whether ceiling load drives the echo.
func echoOptions(o options) (options, bool, error) {
	o.duration = o.echoDur
	if abs, err := filepath.Abs(o.ceiling); err == nil {
		o.ceiling = abs
	}
	if o.ceilingBase != "" {
		if _, err := os.Stat(o.ceilingBase); err != nil {
			return o, false, fmt.Errorf("-ceiling-base: %w", err)
		}
		if abs, err := filepath.Abs(o.ceilingBase); err == nil {
			o.ceilingBase = abs
		}
	}
	useCeiling := o.generator == "ceiling"
	if o.generator == "auto" {
		_, err := os.Stat(o.ceiling)
		useCeiling = err == nil
	}
	return o, useCeiling, nil
}

// echoTable is the section's table as it fills, with what it feeds:
// the points, the A/B of ceiling load's modes and the notes.
type echoTable struct {
	tw     *tabwriter.Writer
	notes  []string
	points []echoPoint
	ab     []abPoint
}

// newEchoTable prints the section's heading and the table's header.
func newEchoTable(stdout io.Writer, o options, pl placement) *echoTable {
	fmt.Fprintf(stdout, "3. refserver /echo: refserver on cpu %s, generator on cpu %s, %d connections, %d-byte messages, closed loop, %s windows\n",
		orDash(pl.srv), orDash(pl.gen), o.echoConns, o.size, o.duration)
	fmt.Fprintln(stdout, "   CPU from /proc/<pid>/stat over the same interval for both processes (10 ms ticks), in ns per echoed message;")
	fmt.Fprintln(stdout, "   runq: seconds per second the process's threads sat runnable waiting for a CPU (schedstat): other load on its core")
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "batch\tgenerator\tmsg/s\tgen user\tgen sys\tsrv user\tsrv sys\tgen/srv user\tgen cores\tsrv cores\tgen reads/msg\tgen runq\tsrv runq\terrors\t")
	return &echoTable{tw: tw}
}

// row adds p to the table, and a note when it had errors or its
// threads waited for a CPU.
func (t *echoTable) row(p echoPoint) {
	t.points = append(t.points, p)
	reads := "n/a"
	if p.readsPerMsg >= 0 {
		reads = fmt.Sprintf("%.3f", p.readsPerMsg)
	}
	errs := strconv.FormatInt(p.errors, 10)
	if p.errors > 0 {
		errs = "ERRORS " + errs
		t.notes = append(t.notes, fmt.Sprintf("batch %d (%s) had %d errors: %s", p.batch, p.generatorName, p.errors, p.errorDetail))
	}
	if gw, sw := p.gen.wait.Seconds()/p.sampledS, p.srv.wait.Seconds()/p.sampledS; gw > contended || sw > contended {
		t.notes = append(t.notes, fmt.Sprintf("batch %d (%s): threads waited for a CPU %.2f s/s (generator) and %.2f s/s (refserver): msg/s measures other load on the cores; CPU per message still holds", p.batch, p.generatorName, gw, sw))
	}
	fmt.Fprintf(t.tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t%.2f\t%.2f\t%s\t\n", p.batch, p.generatorName, si(p.ratePerS),
		p.perMsg(p.gen.user), p.perMsg(p.gen.sys), p.perMsg(p.srv.user), p.perMsg(p.srv.sys),
		p.userRatio(),
		(p.gen.user+p.gen.sys).Seconds()/p.sampledS, (p.srv.user+p.srv.sys).Seconds()/p.sampledS, reads,
		p.gen.wait.Seconds()/p.sampledS, p.srv.wait.Seconds()/p.sampledS, errs)
}

// measure runs the floor at each batch, then ceiling load's modes (or,
// without ceiling, the built-in wsconn loop, both read modes).
func (t *echoTable) measure(o options, pl placement, srv *proc, self, url string, useCeiling bool) error {
	for _, batch := range []int{1, 10, 100} {
		fp, err := echoWithRole(o, pl, srv, self, url, batch, floorName, "floor")
		if err != nil {
			return fmt.Errorf("floor: %w", err)
		}
		t.row(fp)
		if useCeiling {
			err := t.ceilingPoints(o, pl, srv, url, batch)
			if err == nil {
				continue
			}
			if o.generator != "auto" {
				return err
			}
			t.notes = append(t.notes, fmt.Sprintf("ceiling load failed at batch %d (%v); the built-in wsconn loop measured the rest", batch, err))
			useCeiling = false
		}
		for _, eager := range []bool{false, true} {
			if eager && batch == 1 {
				continue // one message per batch: the modes are the same
			}
			p, err := echoWithBuiltin(o, pl, srv, self, url, batch, !eager)
			if err != nil {
				return err
			}
			t.row(p)
		}
	}
	return nil
}

// ceilingPoints runs every ceiling load mode at batch.
//
// ceiling load runs every I/O mode at each batch, interleaved, so the
// section's A/B compares points of the same run: goroutines waking once
// per batch (ExpectBytes), goroutines with eager reads (batch > 1),
// and the event loops (--io loop, both read modes).
func (t *echoTable) ceilingPoints(o options, pl placement, srv *proc, url string, batch int) error {
	for _, m := range ceilingModes(batch, o.ceilingBase) {
		p, err := echoWithCeiling(o, pl, srv, url, batch, m)
		if err != nil {
			return err
		}
		t.row(p)
		t.ab = append(t.ab, abPoint{m.io, m.eager, m.base != "", p})
	}
	return nil
}

// write ends the table and prints the target, the A/B, the floor and
// the notes.
func (t *echoTable) write(stdout io.Writer) {
	t.tw.Flush()
	fmt.Fprintln(stdout, "   target: gen/srv user <= 0.33 (the generator's user-space CPU per message at most a third of refserver's)")
	writeAB(stdout, t.ab)
	writeFloor(stdout, t.points)
	for _, n := range t.notes {
		fmt.Fprintln(stdout, "NOTE:", n)
	}
}

// sampleWindow reads both processes' CPU now and after most of the
// measured window (10% margin so both samples fall inside it).
func sampleWindow(o options, genPid, srvPid int) (gen, srv cpuTimes, seconds float64, err error) {
	g0, err1 := readCPU(genPid)
	s0, err2 := readCPU(srvPid)
	t0 := time.Now()
	time.Sleep(o.duration * 9 / 10)
	g1, err3 := readCPU(genPid)
	s1, err4 := readCPU(srvPid)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return cpuTimes{}, cpuTimes{}, 0, err
	}
	return g1.sub(g0), s1.sub(s0), time.Since(t0).Seconds(), nil
}

func echoWithBuiltin(o options, pl placement, srv *proc, self, url string, batch int, readAhead bool) (echoPoint, error) {
	name := "builtin wsconn loop, eager reads"
	if readAhead || batch == 1 {
		name = "builtin wsconn loop"
	}
	if readAhead && batch > 1 {
		name += " + ExpectBytes"
	}
	return echoWithRole(o, pl, srv, self, url, batch, name, "echo", fmt.Sprintf("-readahead=%v", readAhead))
}

// echoWithRole runs this program's echo-generating role (echo, floor)
// pinned to the generator's CPU with GOMAXPROCS=1 and samples both
// processes' CPU over the window it announces.
func echoWithRole(o options, pl placement, srv *proc, self, url string, batch int, name, role string, extra ...string) (echoPoint, error) {
	args := append([]string{"-role", role, "-url", url,
		"-conns", fmt.Sprint(o.echoConns), "-batch", fmt.Sprint(batch), "-size", fmt.Sprint(o.size),
		"-duration", o.duration.String(), "-warmup", o.warmup.String()}, extra...)
	g, err := startProc(role+" loop", pl.gen, []string{"GOMAXPROCS=1"}, self, args...)
	if err != nil {
		return echoPoint{}, err
	}
	defer g.kill()
	if _, err := g.expect("window-start", 30*time.Second); err != nil {
		return echoPoint{}, err
	}
	p := echoPoint{batch: batch, generatorName: name}
	if p.gen, p.srv, p.sampledS, err = sampleWindow(o, g.pid(), srv.pid()); err != nil {
		return p, err
	}
	r, err := g.result(30 * time.Second)
	if err != nil {
		return p, err
	}
	p.ratePerS = float64(r.Messages) / r.Seconds
	p.readsPerMsg = float64(r.Reads) / float64(r.Messages)
	p.errors, p.errorDetail = r.Errors, r.Error
	return p, nil
}

// loadResult is the part of `ceiling load --json` (load.Result) read here;
// a local copy so this program builds whatever state package load is in.
type loadResult struct {
	Summary struct {
		ThroughputPerS float64          `json:"throughput_per_s"`
		Messages       int64            `json:"messages"`
		Errors         int64            `json:"errors"`
		ErrorsByReason map[string]int64 `json:"errors_by_reason"`
	} `json:"summary"`
	Generator struct {
		ReadSyscalls int64 `json:"read_syscalls"`
	} `json:"generator"`
}

func echoWithCeiling(o options, pl placement, srv *proc, url string, batch int, m ceilingMode) (echoPoint, error) {
	if m.base != "" {
		o.ceiling = m.base
	}
	return ceilingLoad(o, pl, srv, batch, m.name(), "--scenario", "echo", "--url", url,
		"--connections", fmt.Sprint(o.echoConns), "--batch", fmt.Sprint(batch), "--record-size", fmt.Sprint(o.size),
		"--io", m.io, fmt.Sprintf("--eager-reads=%v", m.eager))
}

// ceilingLoad runs one `ceiling load` point pinned to the generator's CPU
// with args (the window, marker and JSON flags are added) and samples both
// processes' CPU over its window.
func ceilingLoad(o options, pl placement, srv *proc, batch int, name string, args ...string) (echoPoint, error) {
	dir, err := os.MkdirTemp("", "ceiling-bench-")
	if err != nil {
		return echoPoint{}, err
	}
	defer os.RemoveAll(dir)
	marker, jsonPath := filepath.Join(dir, "measuring"), filepath.Join(dir, "result.json")
	argv := append([]string{"load"}, args...)
	argv = append(argv, "--duration", o.duration.String(), "--warmup", o.warmup.String(),
		"--measure-marker", marker, "--json", jsonPath, "--quiet")
	g, err := startProc("ceiling load", pl.gen, nil, o.ceiling, argv...)
	if err != nil {
		return echoPoint{}, err
	}
	defer g.kill()
	if err := waitFile(marker, g, 60*time.Second); err != nil {
		return echoPoint{}, err
	}
	p := echoPoint{batch: batch, generatorName: name}
	if p.gen, p.srv, p.sampledS, err = sampleWindow(o, g.pid(), srv.pid()); err != nil {
		return p, err
	}
	select {
	case <-g.child.Done():
	case <-time.After(o.duration + 30*time.Second):
		return p, fmt.Errorf("ceiling load did not exit: %s", g.stderr.String())
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		return p, fmt.Errorf("ceiling load (%v) wrote no JSON: %s", g.child.Wait(), g.stderr.String())
	}
	var r loadResult
	if err := json.Unmarshal(b, &r); err != nil {
		return p, fmt.Errorf("ceiling load JSON: %w", err)
	}
	p.ratePerS = r.Summary.ThroughputPerS
	p.readsPerMsg = -1
	if r.Generator.ReadSyscalls > 0 && r.Summary.Messages > 0 {
		p.readsPerMsg = float64(r.Generator.ReadSyscalls) / float64(r.Summary.Messages)
	}
	p.errors = r.Summary.Errors
	if p.errors > 0 {
		p.errorDetail = fmt.Sprint(r.Summary.ErrorsByReason)
	}
	if p.ratePerS <= 0 {
		return p, fmt.Errorf("ceiling load measured no throughput: %s", g.stderr.String())
	}
	return p, nil
}

func waitFile(path string, p *proc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		select {
		case <-p.child.Done():
			return fmt.Errorf("%s exited (%v) before creating %s: %s", p.name, p.child.Wait(), path, p.stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: no %s within %s", p.name, path, timeout)
}

func waitHealthy(url string, p *proc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.child.Done():
			return fmt.Errorf("%s exited (%v): %s", p.name, p.child.Wait(), p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: %s not healthy within %s", p.name, url, timeout)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startRefserver starts refserver pinned to the server's CPUs on a free
// port and waits for its /health; stop kills it and removes a binary it
// built.
func startRefserver(o options, pl placement) (srv *proc, addr string, stop func(), err error) {
	refPath, cleanup, err := refserverBinary(o.refserver)
	if err != nil {
		return nil, "", nil, err
	}
	if addr, err = freeAddr(); err != nil {
		cleanup()
		return nil, "", nil, err
	}
	if srv, err = startProc("refserver", pl.srv, nil, refPath, "--addr", addr); err != nil {
		cleanup()
		return nil, "", nil, err
	}
	stop = func() { srv.kill(); cleanup() }
	if err := waitHealthy("http://"+addr+"/health", srv, 15*time.Second); err != nil {
		stop()
		return nil, "", nil, err
	}
	return srv, addr, stop, nil
}

// refserverBinary returns path when it exists, else builds ./cmd/refserver
// of the module around the working directory into a temporary directory.
func refserverBinary(path string) (string, func(), error) {
	if _, err := os.Stat(path); err == nil {
		abs, err := filepath.Abs(path)
		return abs, func() {}, err
	}
	dir, err := os.MkdirTemp("", "ceiling-refserver-")
	if err != nil {
		return "", nil, err
	}
	out := filepath.Join(dir, "refserver")
	build := exec.Command("go", "build", "-o", out, "./cmd/refserver")
	build.Dir = moduleRoot()
	if b, err := build.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("-refserver %s missing and go build ./cmd/refserver failed: %v: %s", path, err, b)
	}
	return out, func() { os.RemoveAll(dir) }, nil
}

// moduleRoot is the nearest directory upwards holding go.mod, or ".".
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
}

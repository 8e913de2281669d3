package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ceiling-bench/ceiling/internal/procfs"
	"github.com/ceiling-bench/ceiling/pinning"
)

// memSection is section 6: the generator's memory per connection at scale.
// `ceiling load --scenario echo` holds N connections, each sending one
// message a second (open loop, --rate N, batch 1), against a fresh
// refserver, once per -mem-io mode. Near the end of the window (at 90%,
// every connection still open and the load steady) it reads the
// generator's VmRSS and VmHWM (/proc/<pid>/status): per connection is
// (figure at N - figure at memBaseConns) / (N - memBaseConns), the same
// generator at memBaseConns connections being the baseline, so the
// process's fixed cost (runtime, histograms, payload pool) drops out.
// refserver's per connection is its VmRSS at the same instant minus its
// VmRSS before the generator started, over N: the server's cost, for
// context. Both processes get RLIMIT_NOFILE 65536 before exec (root may
// raise the hard limit; docs/pinning.md); a count the generator's limit
// cannot hold is lowered to what it can, and the report says so.
func memSection(o options, stdout io.Writer, pl placement) error {
	if _, err := os.Stat(o.ceiling); err != nil {
		fmt.Fprintf(stdout, "\n6. Memory per connection: skipped, no %s (make build)\n", o.ceiling)
		return nil
	}
	counts, err := parseCounts(o.memConns)
	if err != nil {
		return fmt.Errorf("-mem-conns: %w", err)
	}
	limit := reachableNoFile(memNoFile)
	fmt.Fprintf(stdout, "\n6. Memory per connection: echo, 1 message per second per connection (open loop, --rate = connections), %d-byte messages, %s windows\n", o.size, o.memDur)
	fmt.Fprintf(stdout, "   refserver on cpu %s, generator on cpu %s; RSS read at 90%% of the window; generator per connection = (RSS at N - RSS at %d) / (N - %d); refserver's = (RSS - RSS idle) / N\n",
		orDash(pl.srv), orDash(pl.gen), memBaseConns, memBaseConns)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "io\tconnections\topen\tmsg/s\tgen VmRSS MB\tgen KB/conn\tgen VmHWM KB/conn\tsrv VmRSS MB\tsrv KB/conn\terrors\t")
	var notes []string
	for _, mode := range strings.Split(o.memIO, ",") {
		mode = strings.TrimSpace(mode)
		base, err := memPoint(o, pl, mode, memBaseConns)
		if err != nil {
			notes = append(notes, fmt.Sprintf("--io %s: not measured: %v", mode, err))
			continue
		}
		for _, n := range counts {
			if need := uint64(n) + memFdSpare; need > limit {
				notes = append(notes, fmt.Sprintf("%d connections need about %d descriptors; RLIMIT_NOFILE can be raised to %d here: measured %d", n, need, limit, limit-memFdSpare))
				n = int(limit - memFdSpare)
			}
			p, err := memPoint(o, pl, mode, n)
			if err != nil {
				notes = append(notes, fmt.Sprintf("--io %s at %d connections: %v", mode, n, err))
				continue
			}
			d := float64(n - memBaseConns)
			if p.errors > 0 {
				notes = append(notes, fmt.Sprintf("--io %s at %d connections: errors %v", mode, n, p.errorsByReason))
			}
			if p.ratePerS < 0.95*float64(n) {
				notes = append(notes, fmt.Sprintf("--io %s at %d connections: %.0f msg/s of the %d asked: the generator (or the shared machine) did not keep up, so this point is not the steady load its memory should describe", mode, n, p.ratePerS, n))
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.0f\t%.1f\t%.1f\t%.0f\t%.1f\t%d\t\n", p.engine, n, p.open, si(p.ratePerS),
				float64(p.genRSS)/1e6, float64(p.genRSS-base.genRSS)/d/1024, float64(p.genHWM-base.genHWM)/d/1024,
				float64(p.srvRSS)/1e6, float64(p.srvRSS-p.srvIdle)/float64(n)/1024, p.errors)
		}
	}
	tw.Flush()
	fmt.Fprintln(stdout, "   target: generator <= 8 KB per connection at 10,000-20,000 connections (issue 11)")
	for _, n := range notes {
		fmt.Fprintln(stdout, "NOTE:", n)
	}
	return nil
}

const (
	memBaseConns = 100
	memNoFile    = 1 << 16
	memFdSpare   = 64 // descriptors beside the sockets (load.NoFileSpare)
)

type memResult struct {
	engine          string
	open            int
	ratePerS        float64
	errors          int64
	errorsByReason  map[string]int64
	genRSS, genHWM  int64 // bytes
	srvIdle, srvRSS int64
}

// memPoint runs one point against a fresh refserver and reads both
// processes' memory at 90% of the window.
func memPoint(o options, pl placement, mode string, conns int) (memResult, error) {
	m, err := memPointIO(o, pl, mode, conns, true)
	if err != nil && mode == "goroutines" && strings.Contains(err.Error(), "--io is only read by the closed loop") {
		// A generator whose open loop has one engine (goroutines) and
		// refuses --io there: the same point without the flag.
		return memPointIO(o, pl, mode, conns, false)
	}
	return m, err
}

func memPointIO(o options, pl placement, mode string, conns int, ioFlag bool) (memResult, error) {
	var m memResult
	srv, addr, stop, err := startRefserver(o, pl)
	if err != nil {
		return m, err
	}
	defer stop()
	if m.srvIdle, _, err = readMem(srv.pid()); err != nil {
		return m, err
	}
	dir, err := os.MkdirTemp("", "ceiling-bench-mem-")
	if err != nil {
		return m, err
	}
	defer os.RemoveAll(dir)
	marker, jsonPath := filepath.Join(dir, "measuring"), filepath.Join(dir, "result.json")
	args := []string{"load", "--scenario", "echo", "--url", "ws://" + addr + "/echo",
		"--connections", strconv.Itoa(conns), "--batch", "1", "--record-size", strconv.Itoa(o.size),
		"--rate", strconv.Itoa(conns),
		"--duration", o.memDur.String(), "--warmup", "2s",
		"--measure-marker", marker, "--json", jsonPath, "--quiet"}
	if ioFlag {
		args = append(args, "--io", mode)
	}
	g, err := startProc("ceiling load", pl.gen, nil, o.ceiling, args...)
	if err != nil {
		return m, err
	}
	defer g.kill()
	// Connecting tens of thousands, 32 in flight: allow a minute per 10k.
	if err := waitFile(marker, g, time.Duration(conns/10000+1)*time.Minute); err != nil {
		return m, firstLine(err)
	}
	time.Sleep(o.memDur * 9 / 10)
	if m.genRSS, m.genHWM, err = readMem(g.pid()); err != nil {
		return m, err
	}
	if m.srvRSS, _, err = readMem(srv.pid()); err != nil {
		return m, err
	}
	select {
	case <-g.child.Done():
	case <-time.After(o.memDur + 60*time.Second):
		return m, fmt.Errorf("ceiling load did not exit: %s", g.stderr.String())
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		return m, fmt.Errorf("ceiling load (%v) wrote no JSON: %s", g.child.Wait(), g.stderr.String())
	}
	var r struct {
		Config struct {
			Params struct {
				IO string `json:"io"`
			} `json:"params"`
		} `json:"config"`
		Summary struct {
			ConnectionsOpen int              `json:"connections_open"`
			ThroughputPerS  float64          `json:"throughput_per_s"`
			Errors          int64            `json:"errors"`
			ErrorsByReason  map[string]int64 `json:"errors_by_reason"`
		} `json:"summary"`
		Generator struct {
			Engine string `json:"engine"`
		} `json:"generator"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return m, fmt.Errorf("ceiling load JSON: %w", err)
	}
	m.engine = mode
	if e := r.Generator.Engine; e != "" && e != mode {
		m.engine = mode + " (ran " + e + ")"
	} else if e := r.Config.Params.IO; e != "" && e != mode {
		m.engine = mode + " (ran " + e + ")"
	}
	m.open, m.ratePerS, m.errors = r.Summary.ConnectionsOpen, r.Summary.ThroughputPerS, r.Summary.Errors
	m.errorsByReason = r.Summary.ErrorsByReason
	return m, nil
}

// readMem is a process's VmRSS and VmHWM in bytes (/proc/<pid>/status).
func readMem(pid int) (rss, hwm int64, err error) {
	st, err := procfs.ReadStatus(pid)
	if err != nil {
		return 0, 0, err
	}
	rss, hwm = int64(st.VmRSSKiB)<<10, int64(st.VmHWMKiB)<<10
	if rss == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
	}
	return rss, hwm, nil
}

func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= memBaseConns {
			return nil, fmt.Errorf("%q: want connection counts above %d, comma separated", f, memBaseConns)
		}
		out = append(out, n)
	}
	return out, nil
}

// reachableNoFile is the RLIMIT_NOFILE a child asking for want gets
// (pinning.ReachableNoFile).
func reachableNoFile(want uint64) uint64 {
	n, _ := pinning.ReachableNoFile(want)
	return n
}

// firstLine keeps an error to its first line (a child's stderr tail can be
// long).
func firstLine(err error) error {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return fmt.Errorf("%s", s)
}

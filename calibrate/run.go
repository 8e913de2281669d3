package calibrate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ceiling-bench/ceiling/internal/procfs"
	"github.com/ceiling-bench/ceiling/pinning"
)

// Config is one calibration.
type Config struct {
	// Generator is the generator's argv before the contract's flags
	// (`ceiling load`, or a GENERATOR command).
	Generator     []string
	GeneratorCPUs pinning.CPUSet
	SinkCPUs      pinning.CPUSet
	// Sink is the argv of the sink process before "--record-size N
	// --sink-writes W": it prints "ready ADDR" on stdout, then serves
	// (SinkMain).
	Sink []string
	// SinkWrites is WritesBatched (default) or WritesPerMessage.
	SinkWrites string
	Scenarios  []string
	Batches    []int
	Conns      []int // the ramp, ascending
	RecordSize int
	Duration   time.Duration // each step's window
	Warmup     time.Duration
	WorkDir    string    // generator logs, markers and JSON
	Log        io.Writer // one line per step; nil: none
}

// DefaultConns is the connection ramp.
var DefaultConns = []int{1, 4, 16, 64, 256}

// Validate checks the configuration; errors name the flag.
func (c Config) Validate() error {
	switch {
	case len(c.Generator) == 0:
		return errors.New("--generator: empty")
	case len(c.Sink) == 0:
		return errors.New("the sink command is empty")
	case len(c.GeneratorCPUs) == 0 || len(c.SinkCPUs) == 0:
		return errors.New("--lt-cpuset and --srv-cpuset must each name at least one CPU")
	case len(pinning.Overlap(c.GeneratorCPUs, c.SinkCPUs)) > 0:
		return fmt.Errorf("--lt-cpuset %s and --srv-cpuset %s overlap: the sink's CPU would count against the generator", c.GeneratorCPUs, c.SinkCPUs)
	case len(c.Scenarios) == 0:
		return errors.New("--scenario: empty")
	case len(c.Batches) == 0:
		return errors.New("--batch-ladder: empty")
	case len(c.Conns) == 0:
		return errors.New("--conns: empty")
	case c.RecordSize < 1 || c.RecordSize > 1<<20:
		return fmt.Errorf("--record-size: %d is not in 1..1048576", c.RecordSize)
	case c.Duration <= 0:
		return fmt.Errorf("--duration: %s is not positive", c.Duration)
	case c.Warmup < 0:
		return fmt.Errorf("--warmup: %s is negative", c.Warmup)
	case c.SinkWrites != WritesBatched && c.SinkWrites != WritesPerMessage:
		return fmt.Errorf("--sink-writes: %q, want %s or %s", c.SinkWrites, WritesBatched, WritesPerMessage)
	}
	for _, b := range c.Batches {
		if b < 1 {
			return fmt.Errorf("--batch-ladder: %d is not a positive batch", b)
		}
	}
	for i, n := range c.Conns {
		if n < 1 || i > 0 && n <= c.Conns[i-1] {
			return fmt.Errorf("--conns: %v is not ascending positive counts", c.Conns)
		}
	}
	return nil
}

// Run calibrates every scenario and batch of cfg (see the package comment).
func Run(ctx context.Context, cfg Config) (*Doc, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Doc{
		Version: Version, MeasuredAt: time.Now().UTC(), Generator: filepath.Base(cfg.Generator[0]),
		GeneratorCPUs: cfg.GeneratorCPUs.Ints(), SinkCPUs: cfg.SinkCPUs.Ints(), SinkWrites: cfg.SinkWrites, RecordSize: cfg.RecordSize,
		DurationNs: cfg.Duration.Nanoseconds(), WarmupNs: cfg.Warmup.Nanoseconds(),
		Caps: []Cap{}, Skipped: []Skipped{},
	}
	var todo []string
	for _, s := range cfg.Scenarios {
		if why := SkipReason(s); why != "" {
			d.Skipped = append(d.Skipped, Skipped{Scenario: s, Reason: why})
			continue
		}
		todo = append(todo, s)
	}
	if len(todo) == 0 {
		return d, nil
	}
	sink, addr, err := startSink(cfg)
	if err != nil {
		return nil, err
	}
	defer sink.kill()
	for _, s := range todo {
		for _, b := range cfg.Batches {
			url := "ws://" + addr + "/echo"
			c, err := ramp(ctx, cfg, s, b, func(n int) (Step, error) { return step(ctx, cfg, sink, url, s, b, n) })
			if ctx.Err() != nil {
				return d, ctx.Err()
			}
			if err != nil {
				// One batch that cannot be measured (the generator
				// failed at every step) leaves the others their caps.
				d.Failed = append(d.Failed, Failure{Scenario: s, Batch: b, Reason: err.Error()})
				continue
			}
			d.Caps = append(d.Caps, c)
		}
	}
	return d, nil
}

// ramp runs one (scenario, batch) up the connection ladder, a step (run)
// per rung, and derives its cap.
func ramp(ctx context.Context, cfg Config, scenario string, batch int, run func(conns int) (Step, error)) (Cap, error) {
	c := Cap{Scenario: scenario, Batch: batch, Steps: []Step{}}
	cores := float64(len(cfg.GeneratorCPUs))
	best := -1
	for _, n := range cfg.Conns {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		st, err := run(n)
		if err != nil {
			return c, err
		}
		c.Steps = append(c.Steps, st)
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "calibrate: %s batch %d, %d connections: %.0f msg/s, generator %.2f cores (load threads waited %.0f%% of their runnable time), sink %.2f cores%s\n",
				scenario, batch, n, st.ThroughputPerS, st.GeneratorCores, 100*st.RunDelay, st.SinkCores, errNote(st))
		}
		if st.Error != "" {
			break // more connections will not do better
		}
		prev := 0.0
		if best >= 0 {
			prev = c.Steps[best].ThroughputPerS
		}
		if best < 0 || st.ThroughputPerS > prev {
			best = len(c.Steps) - 1
		}
		if st.GeneratorCores/cores >= SaturatedBusy && st.ThroughputPerS < prev*(1+PlateauGain) {
			break
		}
	}
	if best < 0 {
		return c, fmt.Errorf("calibrate %s batch %d: no step measured a throughput: %s", scenario, batch, c.Steps[len(c.Steps)-1].Error)
	}
	b := c.Steps[best]
	c.MeasuredPerS = b.ThroughputPerS / cores
	c.PerCorePerS = c.MeasuredPerS
	c.Connections = b.Connections
	c.Busy = b.GeneratorCores / cores
	c.Saturated = c.Busy >= SaturatedBusy
	c.SinkLimited = b.SinkCores/float64(len(cfg.SinkCPUs)) >= SinkBusy
	c.Contended = b.RunDelay >= ContendedDelay
	if b.GeneratorCores > 0 {
		c.PerCPUSecond = b.ThroughputPerS / b.GeneratorCores
	}
	if !c.Saturated && b.GeneratorCores/cores >= MinProjectBusy {
		c.PerCorePerS, c.Projected = max(c.PerCPUSecond, c.MeasuredPerS), true
	}
	return c, nil
}

func errNote(s Step) string {
	if s.Error != "" {
		return " (" + s.Error + ")"
	}
	if s.Errors > 0 {
		return fmt.Sprintf(" (%d errors)", s.Errors)
	}
	return ""
}

// genResult is the part of the generator's JSON (load.Result) calibrate reads.
type genResult struct {
	Summary struct {
		ThroughputPerS float64 `json:"throughput_per_s"`
		Errors         int64   `json:"errors"`
		Failure        string  `json:"failure"`
	} `json:"summary"`
	Generator struct {
		CPUCores    float64 `json:"cpu_cores"`
		LoadThreads *struct {
			RunDelayFraction float64 `json:"run_delay_fraction"`
		} `json:"load_threads"`
	} `json:"generator"`
}

// step runs the generator once and reads its JSON; a generator that fails
// is a Step with Error (the ramp stops), not an error of Run.
func step(ctx context.Context, cfg Config, sink *child, url, scenario string, batch, conns int) (Step, error) {
	st := Step{Connections: conns}
	dir, err := os.MkdirTemp(cfg.WorkDir, fmt.Sprintf("calibrate-%s-b%d-c%d-", scenario, batch, conns))
	if err != nil {
		return st, err
	}
	marker, jsonPath := filepath.Join(dir, "measuring"), filepath.Join(dir, "load.json")
	argv := append(append([]string{}, cfg.Generator...),
		"--scenario", scenario, "--url", url, "--connections", strconv.Itoa(conns), "--batch", strconv.Itoa(batch),
		"--record-size", strconv.Itoa(cfg.RecordSize), "--duration", cfg.Duration.String(), "--warmup", cfg.Warmup.String(),
		"--connect-strategy", "bounded", "--connect-concurrency", "32",
		"--measure-marker", marker, "--json", jsonPath, "--quiet")
	logf, err := os.Create(filepath.Join(dir, "generator.log"))
	if err != nil {
		return st, err
	}
	defer logf.Close()
	g, err := startChild(pinning.Spec{CPUs: cfg.GeneratorCPUs, NoFile: 1 << 16}, len(cfg.GeneratorCPUs), argv, logf)
	if err != nil {
		return st, err
	}
	defer g.kill()
	timeout := time.After(cfg.Warmup + 60*time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		select {
		case <-g.c.Done():
			st.Error = fmt.Sprintf("generator exited (%v) before its window: %s", g.c.Wait(), tail(logf.Name()))
			return st, nil
		case <-timeout:
			st.Error = "generator created no measure marker within warm-up + 60s"
			return st, nil
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	g0, s0 := procCPU(g.pid()), procCPU(sink.pid())
	t0 := time.Now()
	select {
	case <-time.After(cfg.Duration * 9 / 10):
	case <-ctx.Done():
		return st, ctx.Err()
	}
	g1, s1 := procCPU(g.pid()), procCPU(sink.pid())
	secs := time.Since(t0).Seconds()
	st.SinkCores = (s1 - s0).Seconds() / secs
	select {
	case <-g.c.Done():
	case <-time.After(cfg.Duration + 30*time.Second):
		st.Error = "generator did not exit within 30s of its window"
		return st, nil
	case <-ctx.Done():
		return st, ctx.Err()
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		st.Error = fmt.Sprintf("generator (%v) wrote no JSON: %s", g.c.Wait(), tail(logf.Name()))
		return st, nil
	}
	var r genResult
	if err := json.Unmarshal(b, &r); err != nil {
		st.Error = fmt.Sprintf("generator JSON: %v", err)
		return st, nil
	}
	st.ThroughputPerS, st.Errors = r.Summary.ThroughputPerS, r.Summary.Errors
	st.GeneratorCores = r.Generator.CPUCores
	if lt := r.Generator.LoadThreads; lt != nil {
		st.RunDelay = lt.RunDelayFraction
	}
	if st.GeneratorCores <= 0 { // a generator that does not report it: its process, from /proc
		st.GeneratorCores = (g1 - g0).Seconds() / secs
	}
	switch {
	case r.Summary.Failure != "":
		st.Error = r.Summary.Failure
	case st.ThroughputPerS <= 0:
		st.Error = "no throughput"
	}
	if err := os.RemoveAll(dir); err != nil {
		return st, err
	}
	return st, nil
}

// child is a pinned process in its own process group.
type child struct{ c *pinning.Child }

func startChild(spec pinning.Spec, procs int, argv []string, out io.Writer) (*child, error) {
	cmd := pinning.Command(spec, argv[0], argv[1:]...)
	cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(procs))
	if out != nil {
		cmd.Stdout, cmd.Stderr = out, out
	}
	c, err := pinning.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	return &child{c}, nil
}

func (c *child) pid() int { return c.c.Pid() }

// kill ends the child's process group and reaps it.
func (c *child) kill() {
	_ = syscall.Kill(-c.pid(), syscall.SIGKILL)
	_ = c.c.Wait()
}

// startSink starts the sink process pinned to the sink CPUs and reads its
// address.
func startSink(cfg Config) (*child, string, error) {
	argv := append(append([]string{}, cfg.Sink...), "--record-size", strconv.Itoa(cfg.RecordSize), "--sink-writes", cfg.SinkWrites)
	cmd := pinning.Command(pinning.Spec{CPUs: cfg.SinkCPUs, NoFile: 1 << 16}, argv[0], argv[1:]...)
	cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(len(cfg.SinkCPUs)))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	pc, err := pinning.Start(cmd)
	if err != nil {
		return nil, "", fmt.Errorf("start the sink: %w", err)
	}
	s := &child{pc}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
				lines <- addr
			}
		}
		close(lines)
	}()
	select {
	case addr, ok := <-lines:
		if ok {
			return s, addr, nil
		}
	case <-time.After(15 * time.Second):
	}
	s.kill() // reaps it: errBuf is complete
	return nil, "", fmt.Errorf("the sink did not start: %s", errBuf.String())
}

// procCPU is pid's user+system CPU from /proc (0 when unreadable).
func procCPU(pid int) time.Duration {
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return 0
	}
	return st.UserTime() + st.SystemTime()
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2048 {
		b = b[len(b)-2048:]
	}
	return strings.TrimSpace(string(b))
}

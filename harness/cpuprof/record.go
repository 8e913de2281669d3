package cpuprof

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ceiling-bench/ceiling/harness/scrape"
	"github.com/ceiling-bench/ceiling/result"
)

// Files a recording leaves in its point's directory.
const (
	PerfData  = "perf.data"
	PerfLog   = "perf.log" // perf's own messages
	PprofFile = "cpu.pprof"
	ctlFIFO   = "perf.ctl"
	ackFIFO   = "perf.ack"
)

// Bounds on perf's answers: to a control command, and to SIGINT (it
// writes its data and exits).
const (
	ackTimeout  = 5 * time.Second
	exitTimeout = 20 * time.Second
)

// Spec is one point's profile: where it goes and what it samples.
type Spec struct {
	Dir string // the point's directory
	// Pids lists the servers' processes as of now (called as perf starts
	// and again as the window opens); CPUs are the CPUs they are pinned
	// to, which perf samples whole where it may (Plan.SystemWide).
	Pids   func() []int
	CPUs   []int
	Window time.Duration // the measured window
	// PprofURL is the target's profile URL, its placeholders filled
	// ({seconds}: the window); "": perf.
	PprofURL string
}

// Profiler starts points' recordings; what perf can do here is checked
// once, at its first perf recording.
type Profiler struct {
	env  Env
	once sync.Once
	plan Plan
}

// New is a Profiler over env.
func New(env Env) *Profiler { return &Profiler{env: env} }

// Plan is what Check found (checked once).
func (p *Profiler) Plan() Plan {
	p.once.Do(func() { p.plan = Check(p.env) })
	return p.plan
}

// Recording is one point's profile in flight: Start it as the window
// opens, tell it when the window ended, Finish it for the point's
// record. Every wait in it is bounded, and it never blocks the window.
type Recording struct {
	env    Env
	ctx    context.Context
	spec   Spec
	rec    result.CPUProfile
	note   string
	wg     sync.WaitGroup
	mu     sync.Mutex
	failed string // why, once known

	// perf's
	cmd        *exec.Cmd
	ctl, ack   *os.File
	exited     chan struct{}
	waitErr    error
	enabled    chan struct{} // closed once enable was answered (or failed)
	enabledAt  time.Time
	disabledAt time.Time
	log        string
	enabling   bool // Enable was called
	ended      bool // WindowEnded was called
	finish     sync.Once
	final      *result.CPUProfile
}

// Start prepares s's recording once the point's servers are ready, before
// its load: perf attaches to their processes with its events disabled
// (its start-up, which takes a while on a busy machine, is out of the
// window). Enable starts the sampling as the window opens.
func (p *Profiler) Start(ctx context.Context, s Spec) *Recording {
	r := &Recording{env: p.env, ctx: ctx, spec: s, enabled: make(chan struct{})}
	if s.PprofURL != "" {
		r.rec = result.CPUProfile{Tool: result.ProfilerPprof, DurationNs: int64(s.Window)}
		return r
	}
	r.rec.Tool = result.ProfilerPerf
	plan := p.Plan()
	if plan.Reason != "" {
		r.failed = plan.Reason
		return r
	}
	r.note = plan.Note
	if s.Pids != nil {
		r.rec.Pids = s.Pids()
	}
	if len(r.rec.Pids) == 0 || plan.SystemWide && len(s.CPUs) == 0 {
		r.failed = "no server process to profile"
		return r
	}
	if err := r.startPerf(plan, s); err != nil {
		r.fail(err.Error())
	}
	return r
}

// Enable starts the sampling as the window opens: perf's events enabled
// (the span sampled starts when perf acknowledges), or the fetch of the
// target's profile over the window. It does not wait.
func (r *Recording) Enable() {
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.enabling {
		r.mu.Unlock()
		return
	}
	r.enabling = true
	r.mu.Unlock()
	if r.rec.Tool == result.ProfilerPprof {
		path := filepath.Join(r.spec.Dir, PprofFile)
		client := scrape.NewClient(r.spec.Window + scrape.ProfileSlack)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer close(r.enabled)
			if err := scrape.FetchProfile(r.ctx, client, r.spec.PprofURL, path); err != nil {
				r.fail("the target's profile: " + err.Error())
				return
			}
			r.mu.Lock()
			r.rec.File = path
			r.mu.Unlock()
		}()
		return
	}
	if r.cmd == nil {
		close(r.enabled)
		return
	}
	// A process the servers forked since perf started is theirs too.
	for _, pid := range r.spec.Pids() {
		if !slices.Contains(r.rec.Pids, pid) {
			r.rec.Pids = append(r.rec.Pids, pid)
		}
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(r.enabled)
		at, err := r.command("enable")
		if err != nil {
			r.fail(err.Error())
			return
		}
		r.mu.Lock()
		r.enabledAt = at
		r.mu.Unlock()
	}()
}

// startPerf starts perf with its events disabled, on the control FIFOs.
func (r *Recording) startPerf(plan Plan, s Spec) error {
	ctl, ack := filepath.Join(s.Dir, ctlFIFO), filepath.Join(s.Dir, ackFIFO)
	for _, f := range []string{ctl, ack} {
		_ = os.Remove(f)
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			return fmt.Errorf("perf's control FIFO: %v", err)
		}
	}
	var err error
	// Read-write: the open does not wait for perf, and a read has a
	// deadline (the poller's).
	if r.ctl, err = os.OpenFile(ctl, os.O_RDWR, 0); err != nil {
		return fmt.Errorf("perf's control FIFO: %v", err)
	}
	if r.ack, err = os.OpenFile(ack, os.O_RDWR, 0); err != nil {
		r.ctl.Close()
		return fmt.Errorf("perf's control FIFO: %v", err)
	}
	data := filepath.Join(s.Dir, PerfData)
	r.rec.File = data
	r.log = filepath.Join(s.Dir, PerfLog)
	logf, err := os.Create(r.log)
	if err != nil {
		r.closeFIFOs()
		return fmt.Errorf("perf's log: %v", err)
	}
	defer logf.Close()
	target := []string{"-p", joinInts(r.rec.Pids)}
	if plan.SystemWide {
		// Every task on the servers' CPUs: no thread the servers start
		// while perf attaches is missed; Diff keeps their processes'
		// samples (perf script --pid).
		target = []string{"-a", "-C", joinInts(s.CPUs)}
	}
	r.cmd = exec.Command(plan.Perf, PerfArgs(plan.Event, target, ctl, ack, data)...)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	// No Pdeathsig: it fires when the thread that forked exits, and the
	// harness's threads come and go (pinning). perf -p exits by itself
	// once the processes it records are gone, which the servers'
	// supervisors see to if the harness dies.
	if err := r.cmd.Start(); err != nil {
		r.closeFIFOs()
		return fmt.Errorf("start perf: %v", err)
	}
	r.exited = make(chan struct{})
	go func() { r.waitErr = r.cmd.Wait(); close(r.exited) }()
	return nil
}

// Sampling: 999 Hz (not a round number, which could fall in step with a
// server's own timers), into a 4 MiB ring per CPU (perf_event_mlock_kb
// lets a user other than root 516 KiB; root is not held to it): a perf
// that does not get the CPU to drain its ring in time loses samples,
// and Diff leaves out a point whose samples cover too little of the CPU
// its servers used.
const (
	Freq     = 999
	MmapSize = "4M"
)

// PerfArgs is perf record's command line: cpu-clock samples with call
// graphs on target (-a -C CPUS, or -p PIDS), disabled until the control
// FIFO says enable, no build-id pass at exit.
func PerfArgs(event string, target []string, ctl, ack, data string) []string {
	args := append([]string{"record", "-e", event, "-g"}, target...)
	return append(args, "-D", "-1", "-F", strconv.Itoa(Freq), "-m", MmapSize,
		"--control", "fifo:"+ctl+","+ack, "-o", data, "--no-buildid")
}

// joinInts is a comma-separated list.
func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// command sends perf a control command and waits for its answer; it
// returns when perf answered.
func (r *Recording) command(c string) (time.Time, error) {
	if _, err := r.ctl.WriteString(c + "\n"); err != nil {
		return time.Time{}, fmt.Errorf("perf %s: %v", c, err)
	}
	got := make(chan error, 1)
	go func() {
		_ = r.ack.SetReadDeadline(time.Now().Add(ackTimeout))
		buf := make([]byte, 16)
		n, err := r.ack.Read(buf)
		if err == nil && !strings.Contains(string(buf[:n]), "ack") {
			err = fmt.Errorf("answered %q", buf[:n])
		}
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			return time.Time{}, fmt.Errorf("perf did not acknowledge %s: %v%s", c, err, r.perfSaid())
		}
		return r.env.Now(), nil
	case <-r.exited:
		return time.Time{}, fmt.Errorf("perf exited before it acknowledged %s (%v)%s", c, r.waitErr, r.perfSaid())
	}
}

// perfSaid is perf's last line of output, for a reason.
func (r *Recording) perfSaid() string {
	b, err := os.ReadFile(r.log)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return ""
	}
	return ": " + lastLine(string(b))
}

func (r *Recording) fail(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed == "" {
		r.failed = why
	}
}

// WindowEnded disables perf's events once its enable was answered, then
// has perf write its data and exit; it does not wait.
func (r *Recording) WindowEnded() {
	if r == nil || r.cmd == nil {
		return
	}
	r.mu.Lock()
	if !r.enabling || r.ended {
		r.mu.Unlock()
		return
	}
	r.ended = true
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		<-r.enabled
		r.mu.Lock()
		ok := r.failed == ""
		r.mu.Unlock()
		if ok {
			at, err := r.command("disable")
			if err != nil {
				r.fail(err.Error())
			} else {
				r.mu.Lock()
				r.disabledAt = at
				r.mu.Unlock()
			}
		}
		_ = r.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-r.exited:
		case <-time.After(exitTimeout):
			_ = r.cmd.Process.Kill()
			<-r.exited
			r.fail(fmt.Sprintf("perf did not exit within %s of SIGINT", exitTimeout))
		}
	}()
}

// Finish waits for the recording to end (each wait bounded) and returns
// the point's record of it: its file and span, or why there is none. A
// recording whose window never ended (a point that failed or was cut
// short first) stops perf at once. It may be called again: the same
// record.
func (r *Recording) Finish() *result.CPUProfile {
	if r == nil {
		return nil
	}
	r.finish.Do(func() { r.final = r.finishOnce() })
	return r.final
}

func (r *Recording) finishOnce() *result.CPUProfile {
	r.mu.Lock()
	ended := r.ended
	r.mu.Unlock()
	if r.cmd != nil && !ended {
		_ = r.cmd.Process.Kill()
		r.fail("the point ended before its window did")
	}
	r.wg.Wait()
	if r.cmd != nil {
		<-r.exited
		r.closeFIFOs()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.rec
	if r.cmd != nil && r.failed == "" {
		rec.DurationNs = int64(r.disabledAt.Sub(r.enabledAt))
		if rec.DurationNs <= 0 {
			r.failed = "perf sampled no time"
		}
	}
	if r.cmd != nil && r.failed == "" {
		if fi, err := os.Stat(rec.File); err != nil || fi.Size() == 0 {
			r.failed = "perf wrote no data" + r.perfSaid()
		}
	}
	if r.failed == "" && rec.File == "" {
		r.failed = "no profile was taken (the window never opened)"
	}
	if r.failed != "" {
		return &result.CPUProfile{Tool: rec.Tool, Reason: r.failed}
	}
	return &rec
}

func (r *Recording) closeFIFOs() {
	for _, f := range []*os.File{r.ctl, r.ack} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// Note is what Check said beside a profile it permitted ("" for none).
func (r *Recording) Note() string {
	if r == nil {
		return ""
	}
	return r.note
}

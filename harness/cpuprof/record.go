package cpuprof

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	Dir    string        // the point's directory
	Pids   []int         // the servers' processes, for perf
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
	ended      bool // WindowEnded was called
}

// Start starts s's recording as its window opens: a fetch of the
// target's profile, or perf (Plan) on its processes.
func (p *Profiler) Start(ctx context.Context, s Spec) *Recording {
	r := &Recording{env: p.env}
	if s.PprofURL != "" {
		r.rec = result.CPUProfile{Tool: result.ProfilerPprof, DurationNs: int64(s.Window)}
		path := filepath.Join(s.Dir, PprofFile)
		client := scrape.NewClient(s.Window + scrape.ProfileSlack)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			if err := scrape.FetchProfile(ctx, client, s.PprofURL, path); err != nil {
				r.fail("the target's profile: " + err.Error())
				return
			}
			r.rec.File = path
		}()
		return r
	}
	r.rec.Tool = result.ProfilerPerf
	plan := p.Plan()
	if plan.Reason != "" {
		r.failed = plan.Reason
		return r
	}
	r.note = plan.Note
	if len(s.Pids) == 0 {
		r.failed = "no server process to profile (an external server)"
		return r
	}
	r.enabled = make(chan struct{})
	if err := r.startPerf(plan, s); err != nil {
		r.fail(err.Error())
		close(r.enabled)
		return r
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
	return r
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
	pids := make([]string, len(s.Pids))
	for i, pid := range s.Pids {
		pids[i] = strconv.Itoa(pid)
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
	r.cmd = exec.Command(plan.Perf, PerfArgs(plan.Event, strings.Join(pids, ","), ctl, ack, data)...)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlives the harness
	if err := r.cmd.Start(); err != nil {
		r.closeFIFOs()
		return fmt.Errorf("start perf: %v", err)
	}
	r.exited = make(chan struct{})
	go func() { r.waitErr = r.cmd.Wait(); close(r.exited) }()
	return nil
}

// PerfArgs is perf record's command line: cpu-clock samples with call
// graphs on pids, disabled until the control FIFO says enable, no
// build-id pass at exit.
func PerfArgs(event, pids, ctl, ack, data string) []string {
	return []string{"record", "-e", event, "-g", "-p", pids, "-D", "-1",
		"--control", "fifo:" + ctl + "," + ack, "-o", data, "--no-buildid", "-q"}
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
// the point's record of it: its file and span, or why there is none.
// perf is stopped if WindowEnded never was (an interrupted point).
func (r *Recording) Finish() *result.CPUProfile {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	ended := r.ended
	r.mu.Unlock()
	if r.cmd != nil && !ended {
		_ = r.cmd.Process.Kill()
		r.fail("the window never ended (the point was cut short)")
	}
	r.wg.Wait()
	if r.cmd != nil {
		<-r.exited
		r.closeFIFOs()
	}
	rec := r.rec
	r.mu.Lock()
	defer r.mu.Unlock()
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

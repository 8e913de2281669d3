// Package supervisetest has a fake supervise.Process for unit tests: a
// process that was never started, whose log, exit and readiness the test
// scripts. The harness's point pipeline and the agents' side are driven
// by it behind their seams (harness.Starter); the real processes keep
// their own end-to-end tests. Its Pid is beyond any pid the kernel hands
// out, so that a lookup by it finds nothing, and no signal ever reaches a
// real process: Signal and Stop only record.
package supervisetest

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ceiling-bench/ceiling/harness/supervise"
)

// noPid is above Linux's largest pid_max (2^22): no process has it.
const noPid = 1 << 23

var pids atomic.Int64

// Proc is a scripted process. Its zero value is not usable: New.
type Proc struct {
	name, logPath string
	pid           int

	mu        sync.Mutex
	done      chan struct{}
	exited    bool
	err       error
	log       []string
	signals   []syscall.Signal
	stops     int
	frozen    bool
	freezes   int
	escalated bool
	// StopErr is what Stop returns; Escalate makes Stop report a SIGKILL.
	StopErr  error
	Escalate bool
	// Ready is what a Starter's WaitReady of it returns (nil: ready).
	Ready error
}

var _ supervise.Process = (*Proc)(nil)

// New is a running process named name whose log is logPath ("": none;
// else the file is written as lines are logged).
func New(name, logPath string) *Proc {
	p := &Proc{name: name, logPath: logPath, pid: noPid + int(pids.Add(1)), done: make(chan struct{})}
	p.writeLog()
	return p
}

// Log appends lines to its log.
func (p *Proc) Log(lines ...string) *Proc {
	p.mu.Lock()
	p.log = append(p.log, lines...)
	p.mu.Unlock()
	p.writeLog()
	return p
}

// Exit ends it with err (nil: exit status 0): Done is closed.
func (p *Proc) Exit(err error) *Proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.exitLocked(err)
	return p
}

func (p *Proc) exitLocked(err error) {
	if p.exited {
		return
	}
	p.exited, p.err = true, err
	close(p.done)
}

func (p *Proc) writeLog() {
	if p.logPath == "" {
		return
	}
	p.mu.Lock()
	s := strings.Join(p.log, "\n")
	p.mu.Unlock()
	if s != "" {
		s += "\n"
	}
	_ = os.WriteFile(p.logPath, []byte(s), 0o644)
}

// Signals are the signals Signal was given, in order; Stops counts Stop.
func (p *Proc) Signals() []syscall.Signal {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]syscall.Signal(nil), p.signals...)
}

func (p *Proc) Stops() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stops
}

func (p *Proc) Name() string          { return p.name }
func (p *Proc) Pid() int              { return p.pid }
func (p *Proc) LogPath() string       { return p.logPath }
func (p *Proc) Done() <-chan struct{} { return p.done }

func (p *Proc) Exited() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

func (p *Proc) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *Proc) Tail(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.log[max(0, len(p.log)-n):]
	return strings.Join(l, "\n")
}

// Stop ends a running process as a SIGTERM would (a process already
// exited keeps its status) and returns StopErr.
func (p *Proc) Stop(time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stops++
	p.escalated = p.Escalate
	p.exitLocked(errors.New("signal: terminated"))
	return p.StopErr
}

func (p *Proc) Escalated() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.escalated
}

func (p *Proc) KillTree() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.exitLocked(errors.New("signal: killed"))
}

func (p *Proc) Escaped() []supervise.EscapedProcess { return nil }

// Signal records sig; SIGKILL and SIGTERM end it.
func (p *Proc) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signals = append(p.signals, sig)
	switch sig {
	case syscall.SIGKILL, syscall.SIGTERM:
		p.exitLocked(fmt.Errorf("signal: %v", sig))
	}
	return nil
}

// Freeze records a freeze; a process that exited cannot be frozen.
func (p *Proc) Freeze() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return fmt.Errorf("SIGSTOP to %s: it has exited", p.name)
	}
	p.frozen = true
	p.freezes++
	return nil
}

// Thaw ends a freeze.
func (p *Proc) Thaw() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return fmt.Errorf("SIGCONT to %s: it has exited", p.name)
	}
	p.frozen = false
	return nil
}

// Frozen reports whether it is frozen now, and how often it was.
func (p *Proc) Frozen() (now bool, times int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frozen, p.freezes
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ceiling-bench/ceiling/internal/procfs"
	"github.com/ceiling-bench/ceiling/pinning"
)

// proc is a child started pinned through pinning.Command: its affinity is
// set before its program runs, it is in its own process group, and it gets
// SIGKILL if we die (Pdeathsig).
type proc struct {
	name   string
	child  *pinning.Child
	lines  chan string
	stderr *tailBuffer
}

func startProc(name string, cpus pinning.CPUSet, env []string, path string, args ...string) (*proc, error) {
	cmd := pinning.Command(pinning.Spec{CPUs: cpus, NoFile: 1 << 16}, path, args...)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &proc{name: name, lines: make(chan string, 16), stderr: &tailBuffer{}}
	cmd.Stderr = p.stderr
	if p.child, err = pinning.Start(cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.child.Pid() }

// expect waits for a stdout line starting with prefix and returns the rest.
func (p *proc) expect(prefix string, timeout time.Duration) (string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				err := p.child.Wait()
				return "", fmt.Errorf("%s exited (%v) before %q: %s", p.name, err, prefix, p.stderr.String())
			}
			if rest, found := strings.CutPrefix(l, prefix); found {
				return strings.TrimSpace(rest), nil
			}
		case <-t.C:
			return "", fmt.Errorf("%s: no %q within %s: %s", p.name, prefix, timeout, p.stderr.String())
		}
	}
}

func (p *proc) result(timeout time.Duration) (roleResult, error) {
	line, err := p.expect("result ", timeout)
	if err != nil {
		return roleResult{}, err
	}
	var r roleResult
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return r, fmt.Errorf("%s: result line: %w", p.name, err)
	}
	return r, nil
}

// kill ends the child's whole process group and reaps it.
func (p *proc) kill() {
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	_ = p.child.Wait()
}

// tailBuffer keeps the last 4 KiB a child wrote to stderr, for errors.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}

// cpuTimes is a process's user and kernel CPU from the kernel's own
// accounting, /proc/<pid>/stat fields 14 and 15 (all threads, in USER_HZ
// ticks, which the proc ABI fixes at 100 per second).
type cpuTimes struct{ user, sys, wait time.Duration }

const userHZ = procfs.ClockTicks

func readCPU(pid int) (cpuTimes, error) {
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return cpuTimes{}, err
	}
	t := cpuTimes{user: st.UserTime(), sys: st.SystemTime()}
	t.wait = runDelay(pid)
	return t, nil
}

// parseStat takes utime and stime out of a /proc/<pid>/stat line.
func parseStat(b []byte) (cpuTimes, error) {
	st, err := procfs.ParseStat(0, b)
	return cpuTimes{user: st.UserTime(), sys: st.SystemTime()}, err
}

func (b cpuTimes) sub(a cpuTimes) cpuTimes {
	return cpuTimes{b.user - a.user, b.sys - a.sys, b.wait - a.wait}
}

// runDelay is how long the process's live threads have waited on a run
// queue for a CPU (/proc/<pid>/task/*/schedstat, field 2, ns): the share of
// a window spent waiting is how contended its core was.
func runDelay(pid int) time.Duration {
	var total time.Duration
	for _, tid := range procfs.Tasks(pid) {
		if ss, err := procfs.ReadSchedstat(pid, tid); err == nil {
			total += time.Duration(ss.DelayNs)
		}
	}
	return total
}

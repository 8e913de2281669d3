package main

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ceiling-bench/ceiling/internal/procfs"
	"github.com/ceiling-bench/ceiling/pinning"
	"golang.org/x/sys/unix"
)

// proc is a child started pinned through pinning.Command: its affinity is
// set before its program runs, it leads its own process group, and it
// gets SIGKILL if we die (Pdeathsig). Its stdout and stderr go to one
// pipe that is always drained (a child never blocks on its output); the
// last lines are kept for error messages, and the first line starting
// with watch is handed to found.
type proc struct {
	name  string
	child *pinning.Child
	found chan string
	mu    sync.Mutex
	tail  []string
	once  sync.Once
}

const tailLines = 20

func startProc(name string, cpus pinning.CPUSet, watch, path string, args ...string) (*proc, error) {
	cmd := pinning.Command(pinning.Spec{CPUs: cpus, NoFile: 1 << 16}, path, args...)
	cmd.Env = append(cmd.Env, "GOMAXPROCS=1")
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	p := &proc{name: name, found: make(chan string, 1)}
	if p.child, err = pinning.Start(cmd); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	pw.Close() // the child holds its copy; EOF comes when it (and its children) exit
	register(p)
	go func() {
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			l := sc.Text()
			if !sent && watch != "" && strings.HasPrefix(l, watch) {
				p.found <- strings.TrimSpace(strings.TrimPrefix(l, watch))
				sent = true
			}
			p.mu.Lock()
			p.tail = append(p.tail, l)
			if len(p.tail) > tailLines {
				p.tail = p.tail[1:]
			}
			p.mu.Unlock()
		}
	}()
	return p, nil
}

func (p *proc) pid() int { return p.child.Pid() }

// output is the last lines the child printed, joined.
func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.tail, " | ")
}

// line is the last kept line that starts with prefix, or "".
func (p *proc) line(prefix string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.tail) - 1; i >= 0; i-- {
		if strings.HasPrefix(p.tail[i], prefix) {
			return p.tail[i]
		}
	}
	return ""
}

// exited reports whether the child has exited.
func (p *proc) exited() bool {
	select {
	case <-p.child.Done():
		return true
	default:
		return false
	}
}

// kill ends the child's whole process group and reaps it; only the
// first call signals (once reaped, its pid may be another's).
func (p *proc) kill() {
	p.once.Do(func() {
		_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
		_ = p.child.Wait()
		unregister(p)
	})
}

// waitExit waits up to grace for the child to exit by itself, then kills
// it; it reports whether it had to.
func (p *proc) waitExit(grace time.Duration) (killed bool) {
	select {
	case <-p.child.Done():
	case <-time.After(grace):
		killed = true
	}
	p.kill()
	return killed
}

// live is every child not yet killed, for the signal handler.
var live = struct {
	sync.Mutex
	m map[*proc]bool
}{m: map[*proc]bool{}}

func register(p *proc)   { live.Lock(); live.m[p] = true; live.Unlock() }
func unregister(p *proc) { live.Lock(); delete(live.m, p); live.Unlock() }

// killOnSignal kills every live child's process group on SIGINT or
// SIGTERM and exits: Pdeathsig covers the children, this covers what
// they started.
func killOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-ch
		live.Lock()
		for p := range live.m {
			_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
		}
		live.Unlock()
		fmt.Fprintf(os.Stderr, "clientcost: %s: children killed\n", s)
		os.Exit(1)
	}()
}

// placement is which CPU the client and the server get.
type placement struct {
	client, server int
	note           string
}

func (pl placement) clientSet() pinning.CPUSet {
	if pl.note != "" {
		return nil
	}
	return pinning.CPUSet{pl.client}
}

func (pl placement) serverSet() pinning.CPUSet {
	if pl.note != "" {
		return nil
	}
	return pinning.CPUSet{pl.server}
}

// pickCPUs takes the first two CPUs we may run on, as benchmark/efficiency
// does: client on the first, server on the second.
func pickCPUs() placement {
	if cpus, err := pinning.Granted(0); err == nil {
		if len(cpus) >= 2 {
			return placement{client: cpus[0], server: cpus[1]}
		}
		if len(cpus) == 1 {
			return placement{client: cpus[0], server: cpus[0], note: "one CPU available: nothing pinned, client and server share it; per-CPU figures count both"}
		}
	}
	return placement{note: "CPU affinity unreadable: nothing pinned; per-CPU figures are cpu0's"}
}

// pinSelf moves every thread of this process to cpu, so that the
// orchestrator's own work (polling, ss) never runs on the server's CPU;
// threads created later inherit it.
func pinSelf(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	for _, tid := range procfs.Tasks(os.Getpid()) {
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			return err
		}
	}
	return nil
}

// Package agentside is a point's generator side with AGENTS=N: the
// coordinator (in this process, harness/agents) and its `ceiling agent`
// processes, started, watched, collected and released as the harness's
// point pipeline asks, in place of the one generator process; and the
// network the local agents run on (Lab, in network namespaces).
//
// It knows nothing of the pipeline: the harness gives each point a Point
// (its files, flags, CPUs and bounds) and turns what a step returns — a
// reason and the process whose log tail explains it — into the point's
// failure in the phase it was in.
package agentside

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/internal/argv"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
)

// Point is what one point's agents are given: the sweep's agent knobs and
// network, and the point's files, CPUs and bounds.
type Point struct {
	Index       int // the point's, in its quota cgroups' names
	Agents      int // AGENTS
	Connections int // the point's, split among the active agents
	// Flags are the `ceiling load` flags every agent's share is cut from:
	// a GENERATOR of `PATH load FLAGS...` gives its FLAGS first.
	Flags []string
	// Bin is the `ceiling` binary the agents run: this one, or the one a
	// GENERATOR of the form "PATH load" names.
	Bin            string
	Warmup, Window time.Duration
	Marker, JSON   string // the point's measure marker and merged result
	Log            string // the coordinator's log (where the generator's goes)
	Dir            string // the point's directory, for agent-i.log
	// CPUs are the generator CPUs, every agent's; Environ the agents'
	// environment (the harness's allowlist), NoFile their RLIMIT_NOFILE,
	// Grace their stop grace on an interrupt.
	CPUs    pinning.CPUSet
	Environ []string
	NoFile  uint64
	Grace   time.Duration
	// ConnectTimeout bounds an agent's dial and, with JoinTimeout (every
	// agent joined and ready), the wait for the marker; ExitTimeout the
	// wait for the agents' results after the window.
	ConnectTimeout, JoinTimeout, ExitTimeout time.Duration
	// Env is the local agents' network and the tests' seams.
	Env       Env
	Listen    string // AGENTS_LISTEN: remote agents, no process here
	PortRange string // AGENTS_PORT_RANGE
	// Hub is AGENTS_LISTEN's hub and the sweep's coordinator.log, opened
	// at the sweep's first point and kept to its end.
	Hub func() (*agents.Hub, io.Writer, error)
}

// Run is one point's agents: the coordinator's outcome once it returned,
// and the agent processes started on this machine (none with
// AGENTS_LISTEN), each pinned to the generator CPUs like the one
// generator would be. The coordinator creates the point's marker at the
// common window's start and writes the merged load.Result where the
// generator's JSON goes, so the point's phases (marker, measure, collect)
// run as they do for one generator.
type Run struct {
	pt        Point
	procs     []supervise.Process
	throttles []*pinning.Throttle // Env.Quota's, removed after the agents stopped
	done      chan struct{}       // closed when the coordinator's Run returned
	out       *agents.Outcome
	err       error
}

// New is a point's agents, not started yet.
func New(pt Point) *Run {
	return &Run{pt: pt, done: make(chan struct{})}
}

// pointRate is the --rate among a point's flags (0: closed loop).
func pointRate(args []string) float64 {
	v, _ := argv.Value(args, "rate")
	r, _ := strconv.ParseFloat(v, 64)
	return r
}

// Start starts the coordinator, then the agents that dial it (none with
// AGENTS_LISTEN: the sweep's hub runs the point with the remote agents
// that joined it). url is the point's, flags its `ceiling load` flags;
// cgroup ("": none) caps every agent. A failure comes with the process
// whose log tail explains it, if any.
func (r *Run) Start(ctx context.Context, url string, flags []string, cgroup string) (supervise.Process, error) {
	pt := r.pt
	args := append(append([]string(nil), pt.Flags...), flags...)
	n := agents.Active(pt.Agents, pt.Connections)
	logf, err := os.Create(pt.Log)
	if err != nil {
		return nil, fmt.Errorf("coordinator log: %v", err)
	}
	plan := r.plan(url, args, n, logf)
	if pt.Listen != "" {
		return nil, r.startRemote(ctx, plan, n, logf)
	}
	listen := "127.0.0.1:0"
	if pt.Env.Lab != nil {
		listen = LabHost + ":0"
	}
	// The point's own token: only the agents started below hold it (in
	// their environment, which other users cannot read; an argv they can).
	token := agents.NewToken()
	co, err := agents.Listen(listen, plan, token)
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("coordinator: %v", err)
	}
	go func() {
		defer close(r.done)
		defer logf.Close()
		r.out, r.err = co.Run(ctx)
	}()
	for i := range n {
		if proc, err := r.startAgent(ctx, i, n, co.Addr(), token, cgroup); err != nil {
			return proc, err
		}
	}
	return nil, nil
}

// plan is the coordinator's plan of the point for n agents: its flags,
// its window, and each agent's source addresses (remote agents bring
// their own; in network namespaces each agent's own; else loopback
// addresses spread as the target's URL allows).
func (r *Run) plan(url string, args []string, n int, logf *os.File) agents.Plan {
	pt := r.pt
	plan := agents.Plan{
		Agents: n, Args: args, Connections: pt.Connections, Rate: pointRate(args),
		Warmup: pt.Warmup, Duration: pt.Window, Marker: pt.Marker, JSON: pt.JSON,
		ReadyTimeout: pt.JoinTimeout, ResultTimeout: pt.ExitTimeout, Log: &syncWriter{w: logf},
	}
	portRange := PortRangeSize(pt.PortRange)
	switch {
	case pt.Listen != "":
		// Remote agents bring their own addresses (SOURCE_ADDRS for all).
	case pt.Env.Lab != nil:
		plan.AgentArgs = func(i, conns int) []string {
			var s []string
			for _, a := range Addrs(i, AddrCount(conns, portRange)) {
				s = append(s, a.String())
			}
			return []string{"--source-addrs", strings.Join(s, ",")}
		}
	default:
		plan.AgentArgs = agents.LoopbackSourceAddrs(args, url, load.LocalPortRange())
	}
	return plan
}

// startRemote runs the point on the remote agents of the sweep's hub
// (AGENTS_LISTEN).
func (r *Run) startRemote(ctx context.Context, plan agents.Plan, n int, logf *os.File) error {
	hub, hubLog, err := r.pt.Hub()
	if err != nil {
		logf.Close()
		return fmt.Errorf("coordinator: %v", err)
	}
	fmt.Fprintf(logf, "coordinator: %d remote agents on %s (AGENTS_LISTEN)\n", n, hub.Addr())
	// The hub's lines go to the sweep's coordinator.log (joins and
	// leaves between points) and, during the point, to its log too.
	plan.Log = io.MultiWriter(plan.Log, hubLog)
	go func() {
		defer close(r.done)
		defer logf.Close()
		r.out, r.err = hub.Run(ctx, plan)
		hub.SetLog(hubLog)
	}()
	return nil
}

// startAgent starts agent i of n, dialling the coordinator at addr with
// the point's token: pinned, in the point's cgroup or its own quota's,
// and in a network namespace of its own in the lab.
func (r *Run) startAgent(ctx context.Context, i, n int, addr string, token agents.Token, cgroup string) (supervise.Process, error) {
	pt := r.pt
	cg := cgroup
	if q, ok := pt.Env.Quota[i]; ok {
		th, err := pinning.NewThrottle(supervise.CgroupName(fmt.Sprintf("agent%d-quota", i), pt.Index), q)
		if err != nil {
			return nil, fmt.Errorf("agent %d: quota: %v", i, err)
		}
		r.throttles = append(r.throttles, th)
		cg = th.Path
	}
	lab := pt.Env.Lab
	proc, err := supervise.Start(ctx, supervise.Spec{
		Name: fmt.Sprintf("agent %d", i), Path: pt.Bin,
		Args:     append([]string{"agent", "--coordinator", addr, "--index", strconv.Itoa(i), "--dial-timeout", pt.ConnectTimeout.String()}, pt.Env.Args[i]...),
		Env:      []string{"GOMAXPROCS=" + strconv.Itoa(len(pt.CPUs)), agents.TokenEnv + "=" + token.Text()},
		Environ:  pt.Environ,
		CPUs:     pt.CPUs,
		NoFile:   pt.NoFile,
		Cgroup:   cg,
		LogPath:  filepath.Join(pt.Dir, fmt.Sprintf("agent-%d.log", i)),
		Grace:    pt.Grace,
		NewNetNS: lab != nil,
	})
	if err != nil {
		return nil, fmt.Errorf("start agent %d: %v", i, err)
	}
	r.procs = append(r.procs, proc)
	if lab != nil {
		conns, _ := agents.Segment(pt.Connections, 0, n, i)
		if err := lab.Attach(proc.Pid(), Addrs(i, AddrCount(conns, PortRangeSize(pt.PortRange))), pt.PortRange); err != nil {
			return proc, fmt.Errorf("agent %d: network namespace: %v", i, err)
		}
	}
	return nil, nil
}

// Procs are the agent processes started so far, agent i at i (none with
// AGENTS_LISTEN: remote).
func (r *Run) Procs() []supervise.Process { return r.procs }

// Release removes the agents' quota cgroups, once they stopped.
func (r *Run) Release() {
	for _, th := range r.throttles {
		_ = th.Remove()
	}
}

// syncWriter serialises the coordinator's log lines.
type syncWriter struct {
	mu sync.Mutex
	w  *os.File
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

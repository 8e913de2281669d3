package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/knob"
)

// sweepNetnsEnv marks the copy of `ceiling sweep` running in its private
// network namespace.
const sweepNetnsEnv = "CEILING_SWEEP_NETNS"

// agentsNetwork puts a sweep with local agents (AGENTS=N, AGENTS_NETNS,
// no AGENTS_LISTEN) into network namespaces: as root, the sweep re-runs
// itself in a private network namespace (so the bridge and veths never
// touch the host's network) and returns done=true with the copy's
// status; the copy builds the bridge (agentside.Lab). Where either
// cannot be done, the Env's Note says why in one line (stderr and the
// result's warnings) and the agents run on the host's loopback.
func agentsNetwork(o knob.Agents, external bool, stderr io.Writer) (ag agentside.Env, done bool, err error) {
	if o.Count < 1 || o.Listen != "" || !o.Netns {
		return ag, false, nil
	}
	note := func(why string) {
		// A warning of the result's, which the table prints once.
		ag.Note = fmt.Sprintf("AGENTS=%d: %s, so the agents run as processes on the host's loopback (127.0.(i+1).x source addresses), not in network namespaces (AGENTS_NETNS, docs/agents.md)", o.Count, why)
	}
	if external {
		// The lab's namespace is private: a server outside it (an
		// external target) would be out of the agents' reach.
		note("the target is external, out of reach from a private network namespace")
		return ag, false, nil
	}
	if os.Getenv(sweepNetnsEnv) == "1" {
		lab, err := agentside.NewLab()
		if err != nil {
			note(fmt.Sprintf("no bridge in the private network namespace (%v)", err))
			return ag, false, nil
		}
		ag.Lab = lab
		fmt.Fprintf(stderr, "ceiling sweep: AGENTS=%d in network namespaces: the server and coordinator on %s (a bridge in a private namespace), agent i from 10.77.(i+1).x\n", o.Count, agentside.LabHost)
		return ag, false, nil
	}
	if os.Geteuid() != 0 {
		note("not root (network namespaces need CAP_NET_ADMIN)")
		return ag, false, nil
	}
	cmd := exec.Command("/proc/self/exe", os.Args[1:]...)
	cmd.Env = append(os.Environ(), sweepNetnsEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	// An interrupt reaches the copy, which stops its children and writes
	// what it has.
	err = runForwarding(cmd)
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ag, true, quietExit{exitStatus{ee.ExitCode(), fmt.Errorf("ceiling sweep: the sweep in its network namespace exited with status %d", ee.ExitCode())}}
	case err != nil && !started(cmd):
		if os.Getenv("CI") == "true" {
			return ag, true, fmt.Errorf("ceiling sweep: AGENTS_NETNS: cannot start the sweep in a network namespace as root: %w", err)
		}
		note(fmt.Sprintf("no network namespace could be made (%v)", err))
		return ag, false, nil
	}
	return ag, true, err
}

//go:build !linux

package main

import (
	"fmt"
	"io"

	"github.com/ceiling-bench/ceiling/harness/agentside"
	"github.com/ceiling-bench/ceiling/harness/knob"
)

// agentsNetwork: network namespaces are Linux only; the agents run on the
// loopback, said in one line.
func agentsNetwork(o knob.Agents, external bool, stderr io.Writer) (ag agentside.Env, done bool, err error) {
	if o.Agents < 1 || o.AgentsListen != "" || !o.AgentsNetns {
		return ag, false, nil
	}
	_ = external // loopback agents reach it as they are
	ag.Note = fmt.Sprintf("AGENTS=%d: network namespaces need Linux, so the agents run as processes on the host's loopback", o.Agents)
	fmt.Fprintf(stderr, "ceiling sweep: %s\n", ag.Note)
	return ag, false, nil
}

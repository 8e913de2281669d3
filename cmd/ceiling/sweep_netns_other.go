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
	if o.Count < 1 || o.Listen != "" || !o.Netns {
		return ag, false, nil
	}
	_ = external // loopback agents reach it as they are
	// A warning of the result's, which the table prints once.
	ag.Note = fmt.Sprintf("AGENTS=%d: network namespaces need Linux, so the agents run as processes on the host's loopback", o.Count)
	_ = stderr
	return ag, false, nil
}

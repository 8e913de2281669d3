//go:build !linux

package main

import (
	"fmt"
	"io"

	"github.com/ceiling-bench/ceiling/harness"
)

// agentsNetwork: network namespaces are Linux only; the agents run on the
// loopback, said in one line.
func agentsNetwork(o *harness.Options, external bool, stderr io.Writer) (bool, error) {
	if o.Agents < 1 || o.AgentsListen != "" || !o.AgentsNetns {
		return false, nil
	}
	_ = external // loopback agents reach it as they are
	o.AgentsNote = fmt.Sprintf("AGENTS=%d: network namespaces need Linux, so the agents run as processes on the host's loopback", o.Agents)
	fmt.Fprintf(stderr, "ceiling sweep: %s\n", o.AgentsNote)
	return false, nil
}

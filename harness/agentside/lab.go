package agentside

import (
	"net/netip"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/load"
)

// LabHost is the server's and the coordinator's address on the bridge.
const LabHost = "10.77.0.1"

// labBridge is the bridge's name (in the sweep's private namespace).
const labBridge = "ceil0"

// Addrs are agent i's n source addresses: 10.77.(i+1).1 to .n.
func Addrs(i, n int) []netip.Addr {
	var out []netip.Addr
	for k := 1; k <= n; k++ {
		out = append(out, netip.AddrFrom4([4]byte{10, 77, byte(i + 1), byte(k)}))
	}
	return out
}

// AddrCount is how many source addresses an agent of conns
// connections gets over a port range of portRange ports: at least 2 (the
// multi-address path is always taken), and enough that no address
// carries more than half the range.
func AddrCount(conns, portRange int) int {
	return agents.AddrCount(conns, portRange, 2, 250)
}

// PortRangeSize is the ports an agent namespace has (AGENTS_PORT_RANGE,
// else the kernel's).
func PortRangeSize(s string) int {
	if lo, hi, err := knob.ParsePortRange(s); err == nil {
		return hi - lo + 1
	}
	return load.LocalPortRange()
}

// Env is what a sweep's local agents run in that is not a knob: the
// network the caller built for them, and two seams for tests.
type Env struct {
	// Lab is the bridge the sweep's private network namespace built
	// (cmd/ceiling, AGENTS_NETNS as root): the server and coordinator
	// listen on its address, each agent gets a namespace on it. Nil: the
	// agents are processes on the host's loopback.
	Lab *Lab
	// Note says why the agents are not in network namespaces (not root,
	// or none could be made): the result's warnings carry it.
	Note string
	// Args are extra `ceiling agent` flags by agent index (--wall-skew).
	Args map[int][]string
	// Quota caps agent i at that many CPUs through a cgroup of its own
	// (one slow agent must cap the point).
	Quota map[int]float64
}

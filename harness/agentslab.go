package harness

import (
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/netlab"
	"github.com/ceiling-bench/ceiling/load"
)

// AgentsLab is the network the agents of AGENTS=N run on as root
// (AGENTS_NETNS): `ceiling sweep` has re-executed itself into a private
// network namespace (cmd/ceiling), so nothing here touches the host's
// network. In it a bridge carries LabHost, where the server under test
// ({host}, {addr}) and the coordinator listen; every agent process starts
// in a network namespace of its own (CLONE_NEWNET), joined to the bridge
// by a veth pair with addresses 10.77.(i+1).1.. of its own, which it dials
// from (--source-addrs). Its ip_local_port_range may be shrunk
// (AGENTS_PORT_RANGE) so that a few hundred connections take several
// addresses. The namespaces and veths vanish with the processes, the
// bridge with the sweep.
type AgentsLab struct {
	lab *netlab.Lab
}

// LabHost is the server's and the coordinator's address on the bridge.
const LabHost = "10.77.0.1"

// labBridge is the bridge's name (in the sweep's private namespace).
const labBridge = "ceil0"

// NewAgentsLab builds the bridge; call it inside the sweep's private
// network namespace only.
func NewAgentsLab() (*AgentsLab, error) {
	l, err := netlab.New(labBridge, netip.MustParsePrefix(LabHost+"/16"))
	if err != nil {
		return nil, err
	}
	return &AgentsLab{lab: l}, nil
}

// AgentAddrs are agent i's n source addresses: 10.77.(i+1).1 to .n.
func AgentAddrs(i, n int) []netip.Addr {
	var out []netip.Addr
	for k := 1; k <= n; k++ {
		out = append(out, netip.AddrFrom4([4]byte{10, 77, byte(i + 1), byte(k)}))
	}
	return out
}

// AgentAddrCount is how many source addresses an agent of conns
// connections gets over a port range of portRange ports: at least 2 (the
// multi-address path is always taken), and enough that no address
// carries more than half the range.
func AgentAddrCount(conns, portRange int) int {
	per := max(portRange/2, 1)
	return min(max(2, (conns+per-1)/per), 250)
}

// ParsePortRange reads AGENTS_PORT_RANGE's "LO-HI".
func ParsePortRange(s string) (lo, hi int, err error) {
	a, b, ok := strings.Cut(s, "-")
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || lo < 1024 || hi > 65535 || hi < lo {
		return 0, 0, fmt.Errorf("%q is not a port range LO-HI within 1024-65535", s)
	}
	return lo, hi, nil
}

// portRangeSize is the ports an agent namespace has (AGENTS_PORT_RANGE,
// else the kernel's).
func portRangeSize(s string) int {
	if lo, hi, err := ParsePortRange(s); err == nil {
		return hi - lo + 1
	}
	return load.LocalPortRange()
}

// Attach joins process pid's (fresh) network namespace to the bridge as
// agent i with addrs, after setting its port range (before its link is
// up, so before it can connect anywhere).
func (l *AgentsLab) Attach(pid int, addrs []netip.Addr, portRange string) error {
	if lo, hi, err := ParsePortRange(portRange); err == nil {
		out, err := exec.Command("nsenter", "--net=/proc/"+strconv.Itoa(pid)+"/ns/net",
			"sysctl", "-q", "-w", fmt.Sprintf("net.ipv4.ip_local_port_range=%d %d", lo, hi)).CombinedOutput()
		if err != nil {
			return fmt.Errorf("port range: %v: %s", err, strings.TrimSpace(string(out)))
		}
	}
	// The previous point's agent i had these addresses behind another
	// MAC: the lab's neighbour entries for them may still be reachable,
	// and the server's replies to an address the new agent never ARPed
	// from (all but its first) would go to a veth that is gone.
	if len(addrs) > 0 {
		to := netip.PrefixFrom(addrs[0], 24).Masked().String()
		if out, err := exec.Command("ip", "neigh", "flush", "to", to).CombinedOutput(); err != nil {
			return fmt.Errorf("ip neigh flush to %s: %v: %s", to, err, strings.TrimSpace(string(out)))
		}
	}
	_, err := l.lab.Attach(pid, addrs)
	return err
}

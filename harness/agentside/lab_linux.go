package agentside

import (
	"fmt"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/internal/netlab"
)

// Lab is the network the agents of AGENTS=N run on as root
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
type Lab struct {
	lab *netlab.Lab
}

// NewLab builds the bridge; call it inside the sweep's private
// network namespace only.
func NewLab() (*Lab, error) {
	l, err := netlab.New(labBridge, netip.MustParsePrefix(LabHost+"/16"))
	if err != nil {
		return nil, err
	}
	return &Lab{lab: l}, nil
}

// Attach joins process pid's (fresh) network namespace to the bridge as
// agent i with addrs, after setting its port range (before its link is
// up, so before it can connect anywhere).
func (l *Lab) Attach(pid int, addrs []netip.Addr, portRange string) error {
	if lo, hi, err := knob.ParsePortRange(portRange); err == nil {
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

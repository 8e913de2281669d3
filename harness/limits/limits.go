// Package limits checks, before anything boots, that this machine can
// hold a sweep's largest rung: every limit that would cap a connection
// ladder, on both sides, each refusal naming the limit and its value
// (exit 2, docs/sweep.md "Limits that cap a ladder"):
//
//   - file descriptors: a socket each, in every generator process (the
//     one `ceiling load`, or each of AGENTS' agents: its share) and in
//     every server (its share of the scenario's URLs), against the
//     RLIMIT_NOFILE a child gets here; and both sides' sockets against
//     fs.file-max;
//   - ephemeral ports: the connections from one generator process to one
//     server, against net.ipv4.ip_local_port_range times the source
//     addresses it dials from (SOURCE_ADDRS);
//   - the listen backlog: the connects in flight at once against
//     net.core.somaxconn;
//   - conntrack, where it tracks connections: nf_conntrack_max;
//   - memory: the rung's connections at what each costs the generator,
//     the kernel (both sockets) and the server (SERVER_CONN_BYTES),
//     against MemAvailable.
//
// Check is pure: what the sweep asks (Ask) and what the machine allows
// (Machine, read by Read) in, the refusals out; its tests need no
// machine of a given size. The harness raises what it may raise (each
// child's RLIMIT_NOFILE, up to Want) and refuses the rest.
package limits

import (
	"errors"
	"fmt"
)

// Costs per connection the memory check plans for, measured on the
// machine of docs/sweep.md (Linux 6.18, 2026-12-07): `ceiling load`'s
// event loops at 19,000 connections held 56 MB at most (2.9 KB each),
// and a loopback connection's two sockets took 7.9 KB of kernel slab.
const (
	GeneratorBytesPerConn = 3 << 10
	KernelBytesPerConn    = 8 << 10
	// DefaultServerBytesPerConn is SERVER_CONN_BYTES's default: what the
	// check plans a server to spend on a connection when the user says
	// nothing (refserver measured about 17 KB; seed 000's Node server
	// about 150 KB).
	DefaultServerBytesPerConn = 64 << 10
	// Spare is the descriptors a process needs beside a socket per
	// connection (load.NoFileSpare).
	Spare = 64
	// MaxSourceAddrs is the most loopback source addresses auto spreads
	// over (127.0.0.1-127.0.0.254), each kept within half the port range.
	MaxSourceAddrs = 254
)

// Ladder is one connection ladder's top rung and the knob that set it.
type Ladder struct {
	Knob string // "CONNS_LADDER_10 (--conns-ladder)"
	Top  int
}

// Ask is what a sweep asks of the machine.
type Ask struct {
	Ladders []Ladder
	// Generators is the processes a rung's connections are split over:
	// 1, or AGENTS. LocalGenerators is false when they are remote
	// (AGENTS_LISTEN): their machines' limits are theirs.
	Generators      int
	LocalGenerators bool
	// Servers is the servers the connections spread over (the
	// scenario's URLs); BootedServers false for an external server,
	// whose limits are its own machine's.
	Servers       int
	BootedServers bool
	// SourceAddrs is SOURCE_ADDRS as addresses per generator process: 0
	// for auto (AutoSpread says whether auto spreads: a loopback server,
	// or agents in their own network namespaces, which get addresses as
	// they need), -1 for off.
	SourceAddrs int
	AutoSpread  bool
	// ConnectConcurrency is each generator's connects in flight at most.
	ConnectConcurrency int
	// ServerBytesPerConn is SERVER_CONN_BYTES.
	ServerBytesPerConn uint64
}

// Machine is what this machine allows; a zero figure is unknown and
// checks nothing.
type Machine struct {
	// NoFile is the RLIMIT_NOFILE a child gets here when asked for Want
	// (pinning.ReachableNoFile), and NoFileWhy what held it below.
	NoFile    uint64
	NoFileWhy string
	// FileMax is fs.file-max; FilesAllocated fs.file-nr's first field.
	FileMax, FilesAllocated uint64
	// PortRange is the ephemeral ports per source address
	// (net.ipv4.ip_local_port_range, or AGENTS_PORT_RANGE's in the agents'
	// namespaces); PortRangeName says which.
	PortRange     int
	PortRangeName string
	Somaxconn     int
	MemAvailable  uint64
	// ConntrackMax and ConntrackCount are nf_conntrack's, when it is
	// loaded and tracking (a count above zero); zero otherwise.
	ConntrackMax, ConntrackCount uint64
}

// share is n split over k, rounded up.
func share(n, k int) int {
	if k <= 1 {
		return n
	}
	return (n + k - 1) / k
}

// Top is the largest rung of the ladders, and its ladder's knob.
func (a Ask) Top() Ladder {
	var t Ladder
	for _, l := range a.Ladders {
		if l.Top > t.Top {
			t = l
		}
	}
	return t
}

// Want is the RLIMIT_NOFILE the harness asks for each child: at least
// floor, more when a process's share of the top rung needs it (the
// harness raises what it may, for the server and the generator alike).
func Want(a Ask, floor uint64) uint64 {
	top := a.Top().Top
	need := uint64(max(share(top, a.Generators), share(top, a.Servers))) + Spare
	return max(floor, need)
}

// Check refuses what the machine cannot hold; nil when it can.
func Check(a Ask, m Machine) error {
	var errs []error
	errs = append(errs, checkNoFile(a, m)...)
	top := a.Top()
	if top.Top == 0 {
		return errors.Join(errs...)
	}
	errs = append(errs, checkPorts(a, m, top), checkBacklog(a, m), checkConntrack(a, m, top), checkFileMax(a, m, top), checkMemory(a, m, top))
	return errors.Join(errs...)
}

// checkNoFile: each generator process's share of each ladder's top, and
// each server's, a socket a connection, against a child's RLIMIT_NOFILE.
func checkNoFile(a Ask, m Machine) []error {
	if m.NoFile == 0 {
		return nil
	}
	why := m.NoFileWhy
	if why == "" {
		why = fmt.Sprintf("the harness asked for %d", m.NoFile)
	}
	var errs []error
	for _, l := range a.Ladders {
		if a.LocalGenerators {
			errs = append(errs, noFileSide(l, m, why, a.Generators, "the generator", "agents",
				"; lower the ladder to %d connections or fewer"+agentsHint(a)))
		}
		if a.BootedServers {
			errs = append(errs, noFileSide(l, m, why, a.Servers, "the server", "servers",
				"; lower the ladder to %d connections or fewer, or spread them over more servers (the target's servers and the scenario's urls, docs/sweep.md)"))
		}
	}
	return errs
}

// noFileSide is one side's refusal of ladder l, whose connections are
// split over k processes (one, or who): nil when its share fits. fix
// says what to do, given the most connections that fit.
func noFileSide(l Ladder, m Machine, why string, k int, one, who, fix string) error {
	per := share(l.Top, k)
	need := uint64(per) + Spare
	if need <= m.NoFile {
		return nil
	}
	side := one
	if k > 1 {
		side = fmt.Sprintf("each of %d %s (%d connections each)", k, who, per)
	}
	return fmt.Errorf("%s: %d connections need about %d file descriptors in %s (a socket each, plus %d), but its RLIMIT_NOFILE can be at most %d here: %s"+fix,
		l.Knob, l.Top, need, side, Spare, m.NoFile, why, (m.NoFile-Spare)*uint64(max(1, k)))
}

func agentsHint(a Ask) string {
	if a.Generators > 1 {
		return ", or run more agents (AGENTS)"
	}
	return ", or split it over agents (AGENTS=N, docs/agents.md)"
}

// checkPorts: the connections one generator process makes to one server
// against the ephemeral ports of the addresses it dials from.
func checkPorts(a Ask, m Machine, top Ladder) error {
	if !a.LocalGenerators || m.PortRange <= 0 {
		return nil
	}
	per := share(share(top.Top, a.Generators), max(1, a.Servers))
	var capacity int
	var how string
	switch {
	case a.SourceAddrs > 0:
		capacity, how = a.SourceAddrs*m.PortRange, fmt.Sprintf("%d source addresses (SOURCE_ADDRS)", a.SourceAddrs)
	case a.SourceAddrs == 0 && a.AutoSpread:
		capacity, how = MaxSourceAddrs*(m.PortRange/2), fmt.Sprintf("at most %d source addresses, each kept within half its range (SOURCE_ADDRS=auto)", MaxSourceAddrs)
	case a.SourceAddrs == 0:
		capacity, how = m.PortRange, "one source address: SOURCE_ADDRS=auto spreads only against a server on 127.0.0.0/8"
	default:
		capacity, how = m.PortRange, "one source address (SOURCE_ADDRS=off)"
	}
	if per <= capacity {
		return nil
	}
	return fmt.Errorf("%s: %d connections from one generator process to one server need as many ephemeral ports, but %s gives %d ports per address and the generator dials from %s: %d at most; give SOURCE_ADDRS more addresses (a count, or ranges), widen the range, or split the rung over agents (AGENTS)",
		top.Knob, per, m.PortRangeName, m.PortRange, how, capacity)
}

// checkBacklog: the connects in flight at once, over every generator,
// against the largest listen backlog the kernel grants.
func checkBacklog(a Ask, m Machine) error {
	if m.Somaxconn <= 0 || !a.BootedServers {
		return nil
	}
	inflight := a.ConnectConcurrency * max(1, a.Generators)
	if inflight <= m.Somaxconn {
		return nil
	}
	return fmt.Errorf("net.core.somaxconn is %d, below the %d connects in flight at once (%d per generator process × %d): a server's listen backlog overflows and its SYNs are dropped, and every dropped connect waits a second or more; raise it (sysctl -w net.core.somaxconn=%d) or run fewer agents",
		m.Somaxconn, inflight, a.ConnectConcurrency, max(1, a.Generators), inflight)
}

// checkConntrack: where nf_conntrack tracks connections, the rung's
// connections against its table's room.
func checkConntrack(a Ask, m Machine, top Ladder) error {
	if m.ConntrackMax == 0 || m.ConntrackCount == 0 {
		return nil
	}
	room := int64(m.ConntrackMax) - int64(m.ConntrackCount)
	if int64(top.Top) <= room {
		return nil
	}
	return fmt.Errorf("%s: %d connections, but net.netfilter.nf_conntrack_max is %d with %d entries in use: a full table drops new connections' packets; raise it (sysctl -w net.netfilter.nf_conntrack_max=%d)",
		top.Knob, top.Top, m.ConntrackMax, m.ConntrackCount, uint64(top.Top)+m.ConntrackCount)
}

// checkFileMax: both sides' sockets against the kernel's file table.
func checkFileMax(a Ask, m Machine, top Ladder) error {
	if m.FileMax == 0 {
		return nil
	}
	sides := 0
	if a.LocalGenerators {
		sides++
	}
	if a.BootedServers {
		sides++
	}
	need := uint64(sides * top.Top)
	if need+m.FilesAllocated <= m.FileMax {
		return nil
	}
	return fmt.Errorf("%s: %d connections need %d open files on this machine (a socket on each side), but fs.file-max is %d with %d allocated; raise it (sysctl -w fs.file-max=%d)",
		top.Knob, top.Top, need, m.FileMax, m.FilesAllocated, need+m.FilesAllocated)
}

// checkMemory: the rung's connections at what each is planned to cost,
// against the memory available.
func checkMemory(a Ask, m Machine, top Ladder) error {
	if m.MemAvailable == 0 {
		return nil
	}
	var per uint64
	var parts []string
	if a.LocalGenerators {
		per += GeneratorBytesPerConn
		parts = append(parts, fmt.Sprintf("generator %s", kib(GeneratorBytesPerConn)))
	}
	if a.BootedServers {
		per += KernelBytesPerConn + a.ServerBytesPerConn
		parts = append(parts, fmt.Sprintf("kernel %s (both sockets)", kib(KernelBytesPerConn)), fmt.Sprintf("server %s (SERVER_CONN_BYTES)", kib(a.ServerBytesPerConn)))
	}
	need := uint64(top.Top) * per
	if need <= m.MemAvailable {
		return nil
	}
	return fmt.Errorf("%s: %d connections plan about %s of memory (%s a connection: %s), but MemAvailable is %s: lower the ladder, or set SERVER_CONN_BYTES to what the server is known to spend",
		top.Knob, top.Top, gib(need), kib(per), joinParts(parts), gib(m.MemAvailable))
}

func kib(v uint64) string {
	if v%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", v>>10)
	}
	return fmt.Sprintf("%d B", v)
}

func gib(v uint64) string { return fmt.Sprintf("%.1f GiB", float64(v)/(1<<30)) }

func joinParts(p []string) string {
	s := ""
	for i, x := range p {
		if i > 0 {
			s += ", "
		}
		s += x
	}
	return s
}

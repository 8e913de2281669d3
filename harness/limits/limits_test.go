package limits

import (
	"runtime"
	"strings"
	"testing"
)

// This machine as it was measured (docs/sweep.md): a hard RLIMIT_NOFILE
// of 20000 that nobody may raise, the kernel's default port range, 24 GiB.
var here = Machine{
	NoFile: 20000, NoFileWhy: "the hard limit is 20000 and raising it needs CAP_SYS_RESOURCE",
	FileMax: 2466255, FilesAllocated: 3000,
	PortRange: 28232, PortRangeName: "net.ipv4.ip_local_port_range (32768-60999)",
	Somaxconn: 4096, MemAvailable: 22 << 30,
}

func ask(top int) Ask {
	return Ask{Ladders: []Ladder{{"CONNS_LADDER_1 (--conns-ladder)", top}}, Generators: 1, LocalGenerators: true,
		Servers: 1, BootedServers: true, AutoSpread: true, ConnectConcurrency: 32, ServerBytesPerConn: DefaultServerBytesPerConn}
}

func refused(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("passed; want a refusal naming %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not say %q", err, w)
		}
	}
}

func TestWhatFitsPasses(t *testing.T) {
	if err := Check(ask(19_000), here); err != nil {
		t.Errorf("19,000 connections on this machine: %v", err)
	}
	// 100,000 over 6 agents and 6 servers: each process's share fits.
	a := ask(100_000)
	a.Generators, a.Servers = 6, 6
	if err := Check(a, here); err != nil {
		t.Errorf("100,000 over 6 and 6: %v", err)
	}
	if err := Check(ask(1_000_000), Machine{}); err != nil {
		t.Errorf("an unknown machine checks nothing: %v", err)
	}
}

func TestFileDescriptorsOnBothSides(t *testing.T) {
	refused(t, Check(ask(100_000), here),
		"CONNS_LADDER_1 (--conns-ladder): 100000 connections need about 100064 file descriptors in the generator",
		"at most 20000 here: the hard limit is 20000", "CAP_SYS_RESOURCE", "19936 connections or fewer", "AGENTS=N",
		"in the server (a socket each")
	// Agents share the generator's side; the one server still holds all.
	a := ask(100_000)
	a.Generators = 6
	err := Check(a, here)
	refused(t, err, "in the server", "spread them over more servers")
	if strings.Contains(err.Error(), "in the generator") || strings.Contains(err.Error(), "agents (") {
		t.Errorf("6 agents of 16,667 connections refused: %v", err)
	}
	// An external server's limits are its own machine's; remote agents'
	// theirs.
	a.BootedServers, a.LocalGenerators = false, false
	if err := Check(a, here); err != nil {
		t.Errorf("nothing of ours holds them: %v", err)
	}
	if w := Want(ask(100_000), 1<<16); w != 100_064 {
		t.Errorf("Want = %d: the harness asks for what a process's share needs", w)
	}
	if w := Want(ask(1000), 1<<16); w != 1<<16 {
		t.Errorf("Want = %d, want the floor", w)
	}
}

func TestEphemeralPortsTimesSourceAddresses(t *testing.T) {
	m := here
	m.NoFile = 0 // the ports alone
	a := ask(19_000)
	a.SourceAddrs = -1 // SOURCE_ADDRS=off
	if err := Check(a, m); err != nil {
		t.Errorf("19,000 within one address's 28,232 ports: %v", err)
	}
	m.PortRange, m.PortRangeName = 10_000, "net.ipv4.ip_local_port_range (50000-59999)"
	refused(t, Check(a, m), "19000 connections from one generator process to one server", "net.ipv4.ip_local_port_range (50000-59999) gives 10000 ports",
		"SOURCE_ADDRS=off", "10000 at most")
	a.SourceAddrs = 2
	if err := Check(a, m); err != nil {
		t.Errorf("two addresses of 10,000: %v", err)
	}
	a.SourceAddrs, a.AutoSpread = 0, false // auto against a remote server: one address
	refused(t, Check(a, m), "only against a server on 127.0.0.0/8")
	a.AutoSpread = true
	if err := Check(a, m); err != nil {
		t.Errorf("auto on loopback: %v", err)
	}
}

func TestBacklogConntrackFileMaxAndMemory(t *testing.T) {
	m := here
	m.Somaxconn = 128
	a := ask(1000)
	a.Generators = 6
	refused(t, Check(a, m), "net.core.somaxconn is 128, below the 192 connects in flight", "sysctl -w net.core.somaxconn=192")

	m = here
	m.ConntrackMax, m.ConntrackCount = 262144, 250_000
	refused(t, Check(ask(19_000), m), "net.netfilter.nf_conntrack_max is 262144 with 250000 entries in use")
	m.ConntrackCount = 0 // loaded but tracking nothing here: not a limit
	if err := Check(ask(19_000), m); err != nil {
		t.Errorf("conntrack not tracking: %v", err)
	}

	m = here
	m.FileMax = 30_000
	refused(t, Check(ask(19_000), m), "need 38000 open files", "fs.file-max is 30000 with 3000 allocated")

	m = here
	m.NoFile = 0
	a = ask(1_000_000)
	a.Generators, a.Servers = 64, 64
	refused(t, Check(a, m), "1000000 connections plan about 71.5 GiB of memory", "75 KiB a connection: generator 3 KiB, kernel 8 KiB (both sockets), server 64 KiB (SERVER_CONN_BYTES)",
		"MemAvailable is 22.0 GiB")
	a.ServerBytesPerConn = 4 << 10 // a server known to spend 4 KiB
	if err := Check(a, m); err != nil {
		t.Errorf("at 15 KiB a connection: %v", err)
	}
}

func TestReadThisMachine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc")
	}
	m := Read(1<<16, func(w uint64) (uint64, string) { return w, "" }, 0)
	if m.NoFile != 1<<16 || m.PortRange <= 0 || m.MemAvailable == 0 || m.FileMax == 0 || m.Somaxconn <= 0 {
		t.Errorf("read %+v", m)
	}
	if m := Read(1, nil, 60); m.PortRange != 60 || m.PortRangeName != "AGENTS_PORT_RANGE" {
		t.Errorf("agents' range: %+v", m)
	}
}

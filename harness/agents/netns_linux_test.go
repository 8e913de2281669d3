//go:build e2e

package agents

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/netlab"
	"github.com/ceiling-bench/ceiling/internal/netnstest"
	"github.com/ceiling-bench/ceiling/refserver"
)

// agentChildEnv makes this test binary an agent (TestMain): "ADDR INDEX".
const agentChildEnv = "CEILING_AGENTS_TEST_AGENT"

func TestMain(m *testing.M) {
	if v := os.Getenv(agentChildEnv); v != "" {
		addr, idx, _ := strings.Cut(v, " ")
		i, _ := strconv.Atoi(idx)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		tok, err := ParseToken(TokenEnv, os.Getenv(TokenEnv))
		if err != nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
			os.Exit(1)
		}
		err = RunAgent(ctx, AgentConfig{Coordinator: addr, Index: i, Token: tok, DialTimeout: 10 * time.Second, Parse: testParse, Log: os.Stderr})
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// recordingListener notes the address of every connection it accepts.
type recordingListener struct {
	net.Listener
	mu   sync.Mutex
	from map[string]int
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		ap, _ := netip.ParseAddrPort(c.RemoteAddr().String())
		l.mu.Lock()
		l.from[ap.Addr().String()]++
		l.mu.Unlock()
	}
	return c, err
}

// testAgentsInNetworkNamespaces: 3 agent processes, each in a network
// namespace of its own joined to a bridge by a veth pair with two
// addresses, as three hosts; the server and the coordinator on the
// bridge. The point merges exactly, and the server saw each agent's
// connections from that agent's own addresses.
func testAgentsInNetworkNamespaces(t *testing.T) {
	if !netnstest.Child() {
		netnstest.Run(t, t.Name())
		return
	}
	gw := netip.MustParsePrefix("10.77.0.1/24")
	lab, err := netlab.New("labbr0", gw)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skipf("no bridge here: %v", err)
	}
	srv, err := refserver.New(refserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", gw.Addr().String()+":0")
	if err != nil {
		t.Fatal(err)
	}
	rl := &recordingListener{Listener: l, from: map[string]int{}}
	go func() { _ = srv.Serve(rl) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	url := "ws://" + l.Addr().String() + "/echo"

	const n = 3
	addrsOf := func(i int) []netip.Addr {
		return []netip.Addr{netip.AddrFrom4([4]byte{10, 77, 0, byte(10*(i+1) + 1)}), netip.AddrFrom4([4]byte{10, 77, 0, byte(10*(i+1) + 2)})}
	}
	plan := Plan{
		Agents: n, Connections: 12, Warmup: 200 * time.Millisecond, Duration: time.Second,
		Args: []string{"--url", url, "--connections", "12", "--duration", "1s", "--warmup", "200ms"},
		AgentArgs: func(i, _ int) []string {
			a := addrsOf(i)
			return []string{"--source-addrs", a[0].String() + "," + a[1].String()}
		},
		ReadyTimeout: 20 * time.Second, ResultTimeout: 10 * time.Second, MaxStartSkew: 100 * time.Millisecond,
	}
	co, err := Listen(gw.Addr().String()+":0", plan, testToken)
	if err != nil {
		t.Fatal(err)
	}
	var procs []*exec.Cmd
	for i := range n {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), agentChildEnv+"="+co.Addr()+" "+strconv.Itoa(i), TokenEnv+"="+testToken.Text())
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
		var log strings.Builder
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatalf("agent %d: %v", i, err)
		}
		exited := make(chan error, 1)
		defer func() {
			// An agent exits by itself once the coordinator has its
			// result; one that does not within seconds is killed.
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				if err != nil {
					t.Errorf("agent %d: %v", i, err)
				}
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Errorf("agent %d: still running 10 s after the point: killed", i)
				<-exited
			}
			t.Logf("agent %d:\n%s", i, log.String())
		}()
		if _, err := lab.Attach(cmd.Process.Pid, addrsOf(i)); err != nil {
			t.Fatalf("agent %d: %v", i, err)
		}
		procs = append(procs, cmd)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	out, err := co.Run(ctx)
	if err != nil {
		for _, c := range procs {
			_ = c.Process.Kill()
		}
		t.Fatalf("point: %v", err)
	}
	var msgs int64
	for _, a := range out.Agents {
		var want []string
		for _, x := range addrsOf(a.Index) {
			want = append(want, x.String())
		}
		if !slices.Equal(a.SourceAddrs, want) {
			t.Errorf("agent %d: source addresses %v, want %v", a.Index, a.SourceAddrs, want)
		}
		msgs += a.Result.Summary.Messages
		t.Logf("agent %d: %d conns from %v, rtt %v, offset %v, start skew %v, %.0f msg/s, p99 %v", a.Index, a.Connections, a.SourceAddrs,
			time.Duration(a.RTTNs), time.Duration(a.ClockOffsetNs), time.Duration(a.StartSkewNs), a.ThroughputPerS, time.Duration(a.P99Ns))
	}
	if m := out.Merged.Summary; m.Messages != msgs || m.ConnectionsOpen != 12 || m.Latency.Count != msgs {
		t.Errorf("merged: %d messages (agents %d), %d open, latency count %d", m.Messages, msgs, m.ConnectionsOpen, m.Latency.Count)
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	for i := range n {
		for _, a := range addrsOf(i) {
			if rl.from[a.String()] != 2 {
				t.Errorf("the server saw %d connections from %s (agent %d), want 2 (of its 4, round-robin over 2 addresses)", rl.from[a.String()], a, i)
			}
		}
	}
	t.Logf("server saw connections from %v; merged %.0f msg/s, p99 %v", rl.from, out.Merged.Summary.ThroughputPerS, time.Duration(out.Merged.Summary.Latency.P99))
}

// inNamespaces runs TestPoints' subtests that need network namespaces
// (Linux).
func inNamespaces(t *testing.T) {
	t.Run("agents in network namespaces", testAgentsInNetworkNamespaces)
}

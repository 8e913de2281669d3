//go:build e2e

package nats_test

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// natsServer is bin/nats-server built from the module (a go.mod tool
// dependency) by TestMain, so the tests need nothing beyond go.mod.
var natsServer string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if runtime.GOOS == "linux" && !testing.Short() {
		dir, err := os.MkdirTemp("", "ceiling-nats-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "nats-server"), "github.com/nats-io/nats-server/v2")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build nats-server:", err)
			return 1
		}
		natsServer = filepath.Join(dir, "nats-server")
	}
	return m.Run()
}

// server is one nats-server process with JetStream and the WebSocket
// listener of benchmark/targets/nats.conf, on loopback.
type server struct {
	t               *testing.T
	wsPort, monPort int
	store           string
	cmd             *exec.Cmd
	log             string
	waited          chan struct{}
	conf            string // a config of its own (cluster); "": the shipped nats.conf
}

// freePorts returns n distinct loopback ports that were free a moment
// ago. Every listener stays open until all n are taken, so the kernel
// cannot hand the same port out twice (two single picks could: the
// monitor and the WebSocket listener once got one port between them).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// startServer boots nats-server the way the shipped target does and
// waits for /healthz.
func startServer(t *testing.T) *server {
	t.Helper()
	if natsServer == "" {
		t.Skip("needs Linux and nats-server built from the module (not -short)")
	}
	ports := freePorts(t, 2)
	s := &server{t: t, wsPort: ports[0], monPort: ports[1], store: t.TempDir(), log: filepath.Join(t.TempDir(), "nats.log")}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *server) start() {
	s.launch()
	s.awaitHealthy(20 * time.Second)
}

func (s *server) launch() {
	t := s.t
	t.Helper()
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	if s.conf != "" {
		s.cmd = exec.Command(natsServer, "-c", s.conf)
	} else {
		s.cmd = exec.Command(natsServer, "-c", "../../../benchmark/targets/nats.conf", "-a", "127.0.0.1", "-p", "-1",
			"-m", fmt.Sprint(s.monPort), "-js", "-sd", s.store)
	}
	s.cmd.Env = append(os.Environ(), fmt.Sprintf("CEILING_WS_PORT=%d", s.wsPort))
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.waited = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { c.Wait(); close(done) }(s.cmd, s.waited)
}

func (s *server) awaitHealthy(timeout time.Duration) {
	s.t.Helper()
	s.awaitMonitor("/healthz", timeout, func(status int, _ []byte) (bool, string) {
		return status == http.StatusOK, fmt.Sprintf("status %d", status)
	})
}

// awaitRoutes waits until the node's /routez lists routes to want other
// servers.
func (s *server) awaitRoutes(want int, timeout time.Duration) {
	s.t.Helper()
	s.awaitMonitor("/routez", timeout, func(_ int, body []byte) (bool, string) {
		var rz struct {
			Routes []struct {
				RemoteID   string `json:"remote_id"`
				RemoteName string `json:"remote_name"`
			} `json:"routes"`
		}
		peers := map[string]bool{}
		if json.Unmarshal(body, &rz) == nil {
			for _, r := range rz.Routes {
				peers[cmp.Or(r.RemoteName, r.RemoteID)] = true
			}
		}
		return len(peers) >= want, fmt.Sprintf("routes to %d servers %v, want %d", len(peers), peers, want)
	})
}

// awaitMonitor reads the node's monitoring endpoint path until ready
// says so, for at most timeout. nats-server is another process with
// nothing to signal the test by, so its monitor is read; ready gets the
// status and body, and says what it saw for the failure.
func (s *server) awaitMonitor(path string, timeout time.Duration, ready func(status int, body []byte) (bool, string)) {
	t := s.t
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var saw string
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", s.monPort, path))
		if err != nil {
			saw = err.Error()
		} else {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var ok bool
			if ok, saw = ready(resp.StatusCode, body); ok {
				return
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(s.log)
			t.Fatalf("nats-server %s not ready in %v: %s\n%s", path, timeout, saw, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// restart stops the server (SIGTERM: it flushes its store, and every
// client loses its connection at once) and boots it again on the same
// ports and store. SIGKILL would lose the file store's unflushed tail, so
// the stream would reuse sequences already delivered: a real finding the
// scenario reports (stream_out_of_order), but not the one under test.
func (s *server) restart() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.waited
	s.start()
}

func (s *server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.waited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.waited
	}
}

func (s *server) url() string { return fmt.Sprintf("ws://127.0.0.1:%d", s.wsPort) }

// startCluster boots n nats-servers clustered by routes on loopback, each
// with JetStream and a WebSocket listener, and waits until every one is
// healthy (its /healthz waits for the JetStream meta group).
func startCluster(t *testing.T, n int) []*server {
	t.Helper()
	if natsServer == "" {
		t.Skip("needs Linux and nats-server built from the module (not -short)")
	}
	ports := freePorts(t, 3*n) // a route, a WebSocket and a monitor port per node
	routes := ports[:n]
	var routeURLs []string
	for i := range routes {
		routeURLs = append(routeURLs, fmt.Sprintf("%q", fmt.Sprintf("nats://127.0.0.1:%d", routes[i])))
	}
	var nodes []*server
	for i := 0; i < n; i++ {
		s := &server{t: t, wsPort: ports[n+2*i], monPort: ports[n+2*i+1], store: t.TempDir(), log: filepath.Join(t.TempDir(), "nats.log")}
		s.conf = filepath.Join(t.TempDir(), "node.conf")
		conf := fmt.Sprintf(`server_name: n%d
listen: "127.0.0.1:-1"
http: "127.0.0.1:%d"
websocket { host: 127.0.0.1, port: %d, no_tls: true, compression: false }
jetstream { store_dir: %q }
cluster { name: ceiling, listen: "127.0.0.1:%d", routes: [%s] }
`, i, s.monPort, s.wsPort, s.store, routes[i], strings.Join(routeURLs, ", "))
		if err := os.WriteFile(s.conf, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, s)
	}
	// Every node is started before any is awaited: a node's JetStream is
	// healthy only once the meta group has its quorum.
	for _, s := range nodes {
		s.launch()
		t.Cleanup(s.stop)
	}
	for _, s := range nodes {
		s.awaitHealthy(60 * time.Second)
	}
	// Healthy needs the meta group's quorum, not every route: a reply
	// crosses one route only, so a run starts once every node has a route
	// to every other.
	for _, s := range nodes {
		s.awaitRoutes(n-1, 60*time.Second)
	}
	return nodes
}

package echo

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load"

	"github.com/gorilla/websocket"
)

// sourceServer is a gorilla echo server on loopback that counts the
// connections by the client's address.
type sourceServer struct {
	url  string
	mu   sync.Mutex
	from map[string]int
}

func startSourceServer(t *testing.T) *sourceServer {
	t.Helper()
	s := &sourceServer{from: map[string]int{}}
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		s.mu.Lock()
		s.from[host]++
		s.mu.Unlock()
		for {
			op, p, err := c.ReadMessage()
			if err != nil || c.WriteMessage(op, p) != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	s.url = "ws" + strings.TrimPrefix(srv.URL, "http") + "/echo"
	return s
}

func sourceConfig(url string, conns int, sourceAddrs string) load.Config {
	cfg := load.DefaultConfig()
	cfg.URL = url
	cfg.Connections = conns
	cfg.DurationNs = int64(300 * time.Millisecond)
	cfg.WarmupNs = int64(100 * time.Millisecond)
	cfg.SourceAddrs = sourceAddrs
	return cfg
}

// --source-addrs 4: the run's connections reach the server from
// 127.0.0.1..127.0.0.4, two each, and the result records the addresses.
func TestEchoSpreadsOverSourceAddrs(t *testing.T) {
	srv := startSourceServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := load.Run(ctx, sourceConfig(srv.url, 8, "4"), load.Options{Version: "test", Command: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"}
	if !slices.Equal(res.Generator.SourceAddrs, want) {
		t.Errorf("generator.source_addrs %v, want %v", res.Generator.SourceAddrs, want)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, ip := range want {
		if srv.from[ip] != 2 {
			t.Errorf("server saw connections from %v, want 2 from each of %v", srv.from, want)
			break
		}
	}
}

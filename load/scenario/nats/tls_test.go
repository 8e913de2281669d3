//go:build e2e

package nats_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/testpki"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/scenario/nats"
)

// startTLSServer boots nats-server with JetStream and a TLS WebSocket
// listener using a certificate signed by a CA the test made.
func startTLSServer(t *testing.T) (s *server, ca string) {
	t.Helper()
	if natsServer == "" {
		t.Skip("needs Linux and nats-server built from the module (not -short)")
	}
	dir := t.TempDir()
	authority := testpki.NewCA(t, dir, "ca")
	ca = authority.CertPEM
	cert, key := authority.Leaf(t, dir, "cert", "127.0.0.1")
	ports := freePorts(t, 2)
	s = &server{t: t, wsPort: ports[0], monPort: ports[1], store: t.TempDir(), log: filepath.Join(dir, "nats.log")}
	s.conf = filepath.Join(dir, "tls.conf")
	conf := fmt.Sprintf(`listen: "127.0.0.1:-1"
http: "127.0.0.1:%d"
websocket { host: 127.0.0.1, port: %d, compression: false, tls { cert_file: %q, key_file: %q } }
jetstream { store_dir: %q }
`, s.monPort, s.wsPort, cert, key, s.store)
	if err := os.WriteFile(s.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s.start()
	t.Cleanup(s.stop)
	return s, ca
}

// wss:// with the test's CA verifies and measures; with --insecure it
// measures unverified; with neither the server's certificate is refused
// before any load.
func testWSS(t *testing.T) {
	srv, ca := startTLSServer(t)
	url := fmt.Sprintf("wss://127.0.0.1:%d", srv.wsPort)
	for name, set := range map[string]func(*nats.Params){
		"ca-file":  func(p *nats.Params) { p.CAFile = ca },
		"insecure": func(p *nats.Params) { p.Insecure = true },
	} {
		t.Run(name, func(t *testing.T) {
			res, _ := run(t, config(t, nats.Produce, url, 500*time.Millisecond, set))
			if res.Summary.Messages == 0 || res.Summary.Errors != 0 {
				t.Fatalf("messages %d, errors %v", res.Summary.Messages, res.Summary.ErrorsByReason)
			}
		})
	}
	t.Run("unverified", func(t *testing.T) {
		_, err := load.Run(context.Background(), config(t, nats.Produce, url, 500*time.Millisecond, nil), load.Options{})
		if err == nil || !strings.Contains(err.Error(), "preflight") || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("err %v, want a preflight failure naming the certificate", err)
		}
	})
}

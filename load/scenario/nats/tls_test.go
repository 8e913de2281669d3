package nats_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/scenario/nats"
)

// writeCerts makes a CA and a server certificate for 127.0.0.1 it signed,
// as PEM files in dir: ca.pem, cert.pem, key.pem.
func writeCerts(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ceiling test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("cert.pem", "CERTIFICATE", srvDER), write("key.pem", "EC PRIVATE KEY", keyDER)
}

// startTLSServer boots nats-server with JetStream and a TLS WebSocket
// listener using a certificate signed by a CA the test made.
func startTLSServer(t *testing.T) (s *server, ca string) {
	t.Helper()
	if natsServer == "" {
		t.Skip("needs Linux and nats-server built from the module (not -short)")
	}
	dir := t.TempDir()
	ca, cert, key := writeCerts(t, dir)
	s = &server{t: t, wsPort: freePort(t), monPort: freePort(t), store: t.TempDir(), log: filepath.Join(dir, "nats.log")}
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
func TestWSS(t *testing.T) {
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

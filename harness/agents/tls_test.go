package agents

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/testpki"
	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
)

// tlsLab is a CA with the coordinator's certificate (for 127.0.0.1) and
// an agent's, and a rogue CA with an agent certificate of its own.
type tlsLab struct {
	coord, agent, rogue, rogueCA TLSFiles
}

func newTLSLab(t *testing.T) tlsLab {
	dir := t.TempDir()
	ca := testpki.NewCA(t, dir, "ca")
	cc, ck := ca.Leaf(t, dir, "coordinator", "127.0.0.1")
	ac, ak := ca.Leaf(t, dir, "agent", "agent-0")
	rogue := testpki.NewCA(t, dir, "rogue")
	rc, rk := rogue.Leaf(t, dir, "rogue-agent", "agent-0")
	return tlsLab{
		coord:   TLSFiles{Cert: cc, Key: ck, CA: ca.CertPEM},
		agent:   TLSFiles{Cert: ac, Key: ak, CA: ca.CertPEM},
		rogue:   TLSFiles{Cert: rc, Key: rk, CA: ca.CertPEM},    // trusts the real coordinator, signed by another CA
		rogueCA: TLSFiles{Cert: ac, Key: ak, CA: rogue.CertPEM}, // a real agent that trusts another CA
	}
}

func clientConf(t *testing.T, f TLSFiles, addr string) *tls.Config {
	t.Helper()
	c, err := f.ClientConfig(addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// With AGENTS_TLS_*, the hub speaks TLS 1.3 and admits only an agent
// whose certificate its CA signed, and which then proves the token: a
// plain peer, a TLS peer without a certificate, and an agent with the
// token but a certificate of another CA all get no challenge; an agent
// refuses a coordinator its CA did not sign, and a coordinator without
// TLS. The real agent serves a point through it.
func TestHubMutualTLS(t *testing.T) {
	lab := newTLSLab(t)
	conf, err := lab.coord.ServerConfig()
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuf
	h, err := NewHub("127.0.0.1:0", 1, testToken, &log, conf)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	hello, _ := Encode(tHello, &Hello{Index: 0, Nonce: newNonce()})

	// 1. A peer without TLS.
	p := dialRaw(t, h.Addr())
	p.send(tHello, &Hello{Index: 0, Nonce: newNonce()})
	_ = p.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if rest := p.rest(); strings.Contains(rest, "challenge") {
		t.Errorf("a plain peer got %q", rest)
	}

	// 2. A TLS peer without a certificate.
	pool := x509.NewCertPool()
	ca, _ := os.ReadFile(lab.coord.CA)
	pool.AppendCertsFromPEM(ca)
	tc, err := tls.Dial("tcp", h.Addr(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13})
	if err == nil {
		_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = tc.Write(hello)
		b, rerr := io.ReadAll(tc)
		if strings.Contains(string(b), "challenge") || rerr == nil {
			t.Errorf("a TLS peer without a certificate read %q, %v; want the handshake refused", b, rerr)
		}
		tc.Close()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// 3. The token, but a certificate of another CA.
	err = RunAgent(ctx, AgentConfig{Coordinator: h.Addr(), Index: 0, Token: testToken, TLS: clientConf(t, lab.rogue, h.Addr()),
		DialTimeout: 5 * time.Second, Rejoin: 3, Parse: testParse})
	var ae *CoordinatorAuthError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "refused this agent's certificate") {
		t.Errorf("an agent with a rogue certificate: %v, want refused by the coordinator", err)
	}
	// 4. An agent that trusts another CA refuses this coordinator.
	err = RunAgent(ctx, AgentConfig{Coordinator: h.Addr(), Index: 0, Token: testToken, TLS: clientConf(t, lab.rogueCA, h.Addr()),
		DialTimeout: 5 * time.Second, Rejoin: 3, Parse: testParse})
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "TLS handshake") {
		t.Errorf("an agent that trusts another CA: %v, want it to refuse the coordinator", err)
	}
	// 5. An agent with TLS refuses a coordinator without it.
	plain, err := NewHub("127.0.0.1:0", 1, testToken, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = RunAgent(ctx, AgentConfig{Coordinator: plain.Addr(), Index: 0, Token: testToken, TLS: clientConf(t, lab.agent, plain.Addr()),
		DialTimeout: 5 * time.Second, Rejoin: 3, Parse: testParse})
	plain.Close()
	if !errors.As(err, &ae) {
		t.Errorf("a TLS agent and a plain coordinator: %v, want a CoordinatorAuthError", err)
	}

	// 6. The real agent serves a point.
	srv := refservertest.Start(t, refserver.Config{})
	done := make(chan error, 1)
	go func() {
		done <- RunAgent(ctx, AgentConfig{Coordinator: h.Addr(), Index: 0, Token: testToken, TLS: clientConf(t, lab.agent, h.Addr()),
			DialTimeout: 5 * time.Second, Parse: testParse})
	}()
	out, err := h.Run(ctx, Plan{
		Agents: 1, Connections: 2, Warmup: 100 * time.Millisecond, Duration: 200 * time.Millisecond,
		Args:         []string{"--url", srv.EchoURL(), "--duration", "200ms", "--warmup", "100ms"},
		ReadyTimeout: 10 * time.Second, ResultTimeout: 10 * time.Second, MaxStartSkew: time.Second,
	})
	if err != nil {
		t.Fatalf("point: %v\n%s", err, log.String())
	}
	if out == nil || len(out.Agents) != 1 || out.Merged == nil || out.Merged.Summary.AttemptedOpsPerS <= 0 {
		t.Errorf("outcome %+v, want one agent's report", out)
	}
	h.Close()
	if err := <-done; err != nil {
		t.Errorf("agent: %v", err)
	}
}

// Each file's fault names the file: missing, unreadable, no PEM, a key
// that is not the certificate's.
func TestTLSFilesErrors(t *testing.T) {
	lab := newTLSLab(t)
	dir := t.TempDir()
	junk := dir + "/junk.pem"
	if err := os.WriteFile(junk, []byte("not pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f     TLSFiles
		which string
	}{
		{TLSFiles{Cert: lab.coord.Cert, CA: lab.coord.CA}, "key"},
		{TLSFiles{Cert: dir + "/none.pem", Key: lab.coord.Key, CA: lab.coord.CA}, "cert"},
		{TLSFiles{Cert: lab.coord.Cert, Key: lab.rogue.Key, CA: lab.coord.CA}, "cert"},
		{TLSFiles{Cert: lab.coord.Cert, Key: lab.coord.Key, CA: junk}, "ca"},
		{TLSFiles{Cert: lab.coord.Cert, Key: lab.coord.Key, CA: dir + "/none.pem"}, "ca"},
	} {
		_, err := c.f.ServerConfig()
		var fe *TLSFileError
		if !errors.As(err, &fe) || fe.Which != c.which {
			t.Errorf("%+v: %v, want a TLSFileError for %s", c.f, err, c.which)
		}
	}
	if _, err := lab.agent.ClientConfig("no-port"); err == nil {
		t.Error("ClientConfig of an address without a port: accepted")
	}
}

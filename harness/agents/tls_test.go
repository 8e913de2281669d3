//go:build e2e

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

	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/ceiling-bench/ceiling/refserver/refservertest"
)

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
func testHubMutualTLS(t *testing.T) {
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

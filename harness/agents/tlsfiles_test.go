package agents

import (
	"errors"
	"os"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testpki"
)

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

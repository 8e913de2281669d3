package agents

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
)

// TLSFiles are the optional mutual TLS of a coordinator and its remote
// agents (AGENTS_TLS_CERT, AGENTS_TLS_KEY, AGENTS_TLS_CA): this side's
// certificate and key (PEM), and the CA (PEM) that must have signed the
// other side's. TLS wraps the connection; the token's challenge (auth.go)
// still runs inside it, so a peer needs both a certificate of that CA
// and the token. All three, or none.
type TLSFiles struct {
	Cert, Key, CA string
}

// IsZero reports that no TLS was asked for.
func (f TLSFiles) IsZero() bool { return f == TLSFiles{} }

// TLSFileError is one of the files that could not be used: Which is
// "cert", "key" or "ca".
type TLSFileError struct {
	Which, Path string
	Err         error
}

func (e *TLSFileError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s: %v", e.Which, e.Err)
	}
	return fmt.Sprintf("%s %s: %v", e.Which, e.Path, e.Err)
}
func (e *TLSFileError) Unwrap() error { return e.Err }

// load reads the pair and the CA pool, each error naming its file.
func (f TLSFiles) load() (tls.Certificate, *x509.CertPool, error) {
	for _, v := range []struct{ which, path string }{{"cert", f.Cert}, {"key", f.Key}, {"ca", f.CA}} {
		if v.path == "" {
			return tls.Certificate{}, nil, &TLSFileError{Which: v.which, Err: errors.New("not given: mutual TLS needs the certificate, its key and the CA, all three")}
		}
	}
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return tls.Certificate{}, nil, &TLSFileError{Which: "cert", Path: f.Cert, Err: fmt.Errorf("with key %s: %w", f.Key, err)}
	}
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		return tls.Certificate{}, nil, &TLSFileError{Which: "ca", Path: f.CA, Err: err}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return tls.Certificate{}, nil, &TLSFileError{Which: "ca", Path: f.CA, Err: errors.New("no PEM certificate in it")}
	}
	return pair, pool, nil
}

// ServerConfig is the coordinator's side: its certificate, and an agent's
// required and verified against the CA. TLS 1.3 only.
func (f TLSFiles) ServerConfig() (*tls.Config, error) {
	pair, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		MinVersion:   tls.VersionTLS13,
	}, nil
}

// ClientConfig is an agent's side for the coordinator at addr: its own
// certificate, and the coordinator's verified against the CA for addr's
// host (a DNS name or an IP address in its SANs).
func (f TLSFiles) ClientConfig(addr string) (*tls.Config, error) {
	pair, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--coordinator %s: %w", addr, err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		RootCAs:      pool,
		ServerName:   host,
		MinVersion:   tls.VersionTLS13,
	}, nil
}

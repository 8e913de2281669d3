package agentside

import (
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ceiling-bench/ceiling/harness/agents"
)

// OpenHub opens AGENTS_LISTEN's hub on listen for n agents that prove
// token (AGENTS_TOKEN, checked by Resolve already), over TLS when files
// name a certificate (AGENTS_TLS_*), with its log in workDir's
// coordinator.log: the sweep's joins and leaves, between points too. The
// log is closed after the hub.
func OpenHub(listen string, n int, token string, files agents.TLSFiles, workDir string) (*agents.Hub, io.WriteCloser, error) {
	tok, err := agents.ParseToken("AGENTS_TOKEN", token)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.Create(filepath.Join(workDir, "coordinator.log"))
	if err != nil {
		return nil, nil, fmt.Errorf("coordinator log: %w", err)
	}
	log := &syncWriter{w: f}
	var tlsConf *tls.Config
	if !files.IsZero() {
		if tlsConf, err = files.ServerConfig(); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("AGENTS_TLS_*: %w", err)
		}
	}
	h, err := agents.NewHub(listen, n, tok, log, tlsConf)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("AGENTS_LISTEN %s: %w", listen, err)
	}
	return h, log, nil
}

// Close closes the log's file.
func (s *syncWriter) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Close()
}

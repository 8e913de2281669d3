//go:build !linux

package harness

import (
	"errors"
	"net/netip"
)

// AgentsLab needs Linux (network namespaces): NewAgentsLab errors.
type AgentsLab struct{}

// NewAgentsLab: network namespaces are Linux only.
func NewAgentsLab() (*AgentsLab, error) {
	return nil, errors.New("network namespaces need Linux")
}

// Attach is never reached (no lab).
func (l *AgentsLab) Attach(int, []netip.Addr, string) error {
	return errors.New("network namespaces need Linux")
}

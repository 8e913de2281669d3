//go:build !linux

package agentside

import (
	"errors"
	"net/netip"
)

// Lab needs Linux (network namespaces): NewLab errors.
type Lab struct{}

// NewLab: network namespaces are Linux only.
func NewLab() (*Lab, error) {
	return nil, errors.New("network namespaces need Linux")
}

// Attach is never reached (no lab).
func (l *Lab) Attach(int, []netip.Addr, string) error {
	return errors.New("network namespaces need Linux")
}

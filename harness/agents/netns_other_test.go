//go:build e2e && !linux

package agents

import "testing"

// inNamespaces: network namespaces are Linux's.
func inNamespaces(t *testing.T) {}

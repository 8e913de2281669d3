//go:build !linux

package load

// fillPlatform leaves memory, kernel and affinity empty off Linux.
func fillPlatform(h *Hardware) {}

//go:build !linux

package harness

import "github.com/ceiling-bench/ceiling/load"

// platformHardware leaves memory and kernel empty off Linux.
func platformHardware(h *load.Hardware) {}

//go:build !linux

package testenv

// wakeLoad is a busy loop where threads cannot be pinned.
func wakeLoad() (stop func() int64) { return busyLoad() }

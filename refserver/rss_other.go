//go:build !linux

package refserver

// currentRSS is unknown off Linux; Stats reports the peak instead.
func currentRSS() uint64 { return 0 }

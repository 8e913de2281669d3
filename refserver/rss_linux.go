package refserver

import (
	"bytes"
	"os"
	"strconv"
)

// currentRSS reads the resident set from /proc/self/statm (pages); 0 when
// unreadable, and the caller falls back to the peak.
func currentRSS() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

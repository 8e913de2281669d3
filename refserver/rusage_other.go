//go:build !unix

package refserver

// rusage is not available here; /health reports zeros.
func rusage() (user, sys float64, maxRSS uint64) { return 0, 0, 0 }

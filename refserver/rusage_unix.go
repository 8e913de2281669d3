//go:build unix

package refserver

import (
	"runtime"
	"syscall"
	"time"
)

// rusage returns this process's user and system CPU seconds and peak RSS
// in bytes, from the kernel's own accounting.
func rusage() (user, sys float64, maxRSS uint64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, 0
	}
	user = time.Duration(ru.Utime.Nano()).Seconds()
	sys = time.Duration(ru.Stime.Nano()).Seconds()
	maxRSS = uint64(ru.Maxrss)
	if runtime.GOOS != "darwin" {
		maxRSS *= 1024 // kilobytes everywhere but macOS
	}
	return user, sys, maxRSS
}

package harness

import (
	"github.com/ceiling-bench/ceiling/load"
	"golang.org/x/sys/unix"
)

func platformHardware(h *load.Hardware) {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		h.MemoryBytes = uint64(si.Totalram) * uint64(si.Unit)
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
}

package load

import "golang.org/x/sys/unix"

// fillPlatform adds what only Linux tells cheaply: memory, kernel and the
// CPU affinity the process runs with.
func fillPlatform(h *Hardware) {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		h.MemoryBytes = uint64(si.Totalram) * uint64(si.Unit)
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Kernel = unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
	}
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) == nil {
		for cpu := 0; cpu < 1024 && len(h.CPUAffinity) < set.Count(); cpu++ {
			if set.IsSet(cpu) {
				h.CPUAffinity = append(h.CPUAffinity, cpu)
			}
		}
	}
}

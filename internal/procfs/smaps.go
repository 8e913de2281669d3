package procfs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Rollup is the part of /proc/PID/smaps_rollup (Linux 4.14+) its callers
// use, in kB as the kernel writes them. Pss is the proportional set size:
// each page the process maps counts 1/n for the n processes that map it,
// so summing Pss over a process tree counts a shared page once, where
// summing Rss counts it once per process. Reading it walks the process's
// page tables, which costs more than status or statm: sample it less
// often than CPU.
type Rollup struct {
	RssKiB, PssKiB                      uint64
	PssAnonKiB, PssFileKiB, PssShmemKiB uint64
	// HasPss is false for a rollup without a Pss line (a kernel thread's,
	// or a file from before the field).
	HasPss bool
}

// ReadSmapsRollup reads /proc/PID/smaps_rollup. Reading another user's
// needs the right to trace it (PTRACE_MODE_READ): the error says so, and
// the caller falls back to status's VmRSS.
func ReadSmapsRollup(pid int) (Rollup, error) {
	b, err := os.ReadFile(Root + "/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return Rollup{}, err
	}
	return ParseSmapsRollup(b)
}

// ParseSmapsRollup parses the "Name:   value kB" lines of a
// smaps_rollup file (the first line, the [rollup] range, has no colon
// before its fields and is passed over, as is every field Rollup does not
// keep). A kept field whose value is not a number is an error.
func ParseSmapsRollup(b []byte) (Rollup, error) {
	var r Rollup
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		colon := bytes.IndexByte(line, ':')
		if colon < 0 || bytes.IndexByte(line[:colon], ' ') >= 0 {
			continue
		}
		var dst *uint64
		switch string(line[:colon]) {
		case "Rss":
			dst = &r.RssKiB
		case "Pss":
			dst = &r.PssKiB
			r.HasPss = true
		case "Pss_Anon":
			dst = &r.PssAnonKiB
		case "Pss_File":
			dst = &r.PssFileKiB
		case "Pss_Shmem":
			dst = &r.PssShmemKiB
		default:
			continue
		}
		v := bytes.TrimSpace(line[colon+1:])
		v = bytes.TrimSpace(bytes.TrimSuffix(v, []byte("kB")))
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return Rollup{}, fmt.Errorf("smaps_rollup: malformed %q", line)
		}
		*dst = n
	}
	return r, nil
}

// Memory is one process's memory in bytes: its PSS where smaps_rollup
// could be read (HasPSS), and its RSS always.
type Memory struct {
	PSSBytes, RSSBytes uint64
	HasPSS             bool
}

// ReadMemory reads pid's memory: smaps_rollup's Pss and Rss, or, where
// that cannot be read (a kernel before 4.14, a process this one may not
// trace), status's VmRSS alone. An error is a process gone, or one whose
// memory could not be read at all.
func ReadMemory(pid int) (Memory, error) {
	if r, err := ReadSmapsRollup(pid); err == nil && r.HasPss {
		return Memory{PSSBytes: r.PssKiB << 10, RSSBytes: r.RssKiB << 10, HasPSS: true}, nil
	}
	st, err := ReadStatus(pid)
	if err != nil {
		return Memory{}, err
	}
	if st.Has&HasVmRSS == 0 {
		return Memory{}, fmt.Errorf("status of %d: no VmRSS (a kernel thread, or a process exiting)", pid)
	}
	return Memory{RSSBytes: st.VmRSSKiB << 10}, nil
}

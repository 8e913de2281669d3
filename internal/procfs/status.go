package procfs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Status is the part of /proc/PID/status its callers use. Has tells which
// of the fields the file held: a kernel thread has no Vm* lines, and a
// field the kernel did not write is zero but not absent-as-zero.
type Status struct {
	VmRSSKiB, VmHWMKiB uint64 // resident set now and its peak, kB as the kernel writes them
	Threads            int
	VoluntaryCtxtSwitches,
	NonvoluntaryCtxtSwitches uint64
	CapEff uint64 // effective capabilities, a bit per CAP_*
	Has    StatusField
}

// StatusField names one field of Status, for Status.Has.
type StatusField uint8

const (
	HasVmRSS StatusField = 1 << iota
	HasVmHWM
	HasThreads
	HasVoluntaryCtxtSwitches
	HasNonvoluntaryCtxtSwitches
	HasCapEff
)

// ReadStatus reads /proc/PID/status.
func ReadStatus(pid int) (Status, error) {
	b, err := os.ReadFile(Root + "/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return Status{}, err
	}
	return ParseStatus(b)
}

// ParseStatus parses the "Name:\tvalue" lines of a status file, keeping
// the fields of Status and passing over the rest. A kept field whose
// value is not a number is an error.
func ParseStatus(b []byte) (Status, error) {
	var st Status
	for len(b) > 0 {
		var line []byte
		line, b = nextLine(b)
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		var (
			field StatusField
			dst   *uint64
			base  = 10
		)
		switch string(line[:colon]) { // no allocation: the compiler compares in place
		case "VmRSS":
			field, dst = HasVmRSS, &st.VmRSSKiB
		case "VmHWM":
			field, dst = HasVmHWM, &st.VmHWMKiB
		case "Threads":
			field = HasThreads
		case "voluntary_ctxt_switches":
			field, dst = HasVoluntaryCtxtSwitches, &st.VoluntaryCtxtSwitches
		case "nonvoluntary_ctxt_switches":
			field, dst = HasNonvoluntaryCtxtSwitches, &st.NonvoluntaryCtxtSwitches
		case "CapEff":
			field, dst, base = HasCapEff, &st.CapEff, 16
		default:
			continue
		}
		v := bytes.TrimSpace(line[colon+1:])
		v = bytes.TrimSpace(bytes.TrimSuffix(v, []byte("kB")))
		n, err := strconv.ParseUint(string(v), base, 64)
		if err != nil {
			return Status{}, fmt.Errorf("status: malformed %q", line)
		}
		if dst != nil {
			*dst = n
		} else {
			st.Threads = int(n)
		}
		st.Has |= field
	}
	return st, nil
}

// nextLine splits b after its first line, which it returns without the
// newline.
func nextLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

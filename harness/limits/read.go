package limits

import (
	"strconv"

	"github.com/ceiling-bench/ceiling/internal/procfs"
)

// Read reads this machine's limits. noFile says what RLIMIT_NOFILE a
// child asking for want gets (pinning.ReachableNoFile); agentsPortRange,
// when above zero, is the size of AGENTS_PORT_RANGE, which the agents'
// namespaces get instead of this machine's range.
func Read(want uint64, noFile func(uint64) (uint64, string), agentsPortRange int) Machine {
	var m Machine
	if noFile != nil {
		m.NoFile, m.NoFileWhy = noFile(want)
	}
	if v, err := procfs.SysctlInts("fs.file-max"); err == nil {
		m.FileMax = v[0]
	}
	if v, err := procfs.SysctlInts("fs.file-nr"); err == nil {
		m.FilesAllocated = v[0]
	}
	m.PortRangeName = "net.ipv4.ip_local_port_range"
	if v, err := procfs.SysctlInts("net.ipv4.ip_local_port_range"); err == nil && len(v) == 2 && v[1] >= v[0] {
		m.PortRange = int(v[1] - v[0] + 1)
		m.PortRangeName += " (" + strconv.FormatUint(v[0], 10) + "-" + strconv.FormatUint(v[1], 10) + ")"
	}
	if agentsPortRange > 0 {
		m.PortRange, m.PortRangeName = agentsPortRange, "AGENTS_PORT_RANGE"
	}
	if v, err := procfs.SysctlInts("net.core.somaxconn"); err == nil {
		m.Somaxconn = int(v[0])
	}
	if n, err := procfs.MemAvailable(); err == nil {
		m.MemAvailable = n
	}
	ctMax, errM := procfs.SysctlInts("net.netfilter.nf_conntrack_max")
	ctCount, errC := procfs.SysctlInts("net.netfilter.nf_conntrack_count")
	if errM == nil && errC == nil && ctCount[0] > 0 {
		m.ConntrackMax, m.ConntrackCount = ctMax[0], ctCount[0]
	}
	return m
}

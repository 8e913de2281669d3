package procfs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Root is where the files are read; tests of the readers use the real one.
const Root = "/proc"

// ClockTicks is USER_HZ, the unit of stat's time fields: 100 on every
// Linux architecture Go supports.
const ClockTicks = 100

// FlagKernelThread is PF_KTHREAD in stat's flags: the task is a kernel
// thread (ksoftirqd, kworker, ...), not a user process.
const FlagKernelThread = 0x00200000

// Stat is the part of /proc/PID/stat (or /proc/PID/task/TID/stat) the
// harness uses.
type Stat struct {
	Pid        int    // the process (or thread) id the file was read for
	Comm       string // the command name, without its parentheses
	State      byte   // 'R', 'S', 'Z', ...
	PPid, PGrp int
	Flags      uint64 // PF_* flags; FlagKernelThread marks a kernel thread
	UTicks     uint64 // user time, clock ticks
	STicks     uint64 // system time, clock ticks
	StartTicks uint64 // start time after boot, clock ticks: with Pid, names one task across pid reuse
	Processor  int    // the CPU it last ran on
}

// KernelThread reports whether the task is a kernel thread.
func (s Stat) KernelThread() bool { return s.Flags&FlagKernelThread != 0 }

// UserTime is UTicks as a duration.
func (s Stat) UserTime() time.Duration { return Ticks(s.UTicks) }

// SystemTime is STicks as a duration.
func (s Stat) SystemTime() time.Duration { return Ticks(s.STicks) }

// Ticks converts clock ticks (ClockTicks a second) to a duration.
func Ticks(n uint64) time.Duration { return time.Duration(n) * (time.Second / ClockTicks) }

// ReadStat reads /proc/PID/stat.
func ReadStat(pid int) (Stat, error) {
	return readStat(pid, Root+"/"+strconv.Itoa(pid)+"/stat")
}

// ReadTaskStat reads /proc/PID/task/TID/stat: one thread's own times and
// the CPU it last ran on.
func ReadTaskStat(pid, tid int) (Stat, error) {
	return readStat(tid, Root+"/"+strconv.Itoa(pid)+"/task/"+strconv.Itoa(tid)+"/stat")
}

func readStat(id int, path string) (Stat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(id, b)
}

// ParseStat parses a stat line. The command name may hold spaces and
// parentheses: the fields resume after the last ')'. Fields the kernel
// did not write (an old kernel without processor) are left zero only
// when they come after the ones required.
func ParseStat(id int, b []byte) (Stat, error) {
	open := bytes.IndexByte(b, '(')
	i := bytes.LastIndexByte(b, ')')
	if open < 0 || i < open || i+2 > len(b) {
		return Stat{}, fmt.Errorf("stat of %d: malformed", id)
	}
	st := Stat{Pid: id, Comm: string(b[open+1 : i])}
	f := bytes.Fields(b[i+1:])
	// After the name, numbered as in proc(5): state(3) ppid(4) pgrp(5)
	// ... flags(9) ... utime(14) stime(15) ... starttime(22) ...
	// processor(39). f[0] is field 3.
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("stat of %d: malformed", id)
	}
	st.State = f[0][0]
	var errs [6]error
	st.PPid, errs[0] = strconv.Atoi(string(f[1]))
	st.PGrp, errs[1] = strconv.Atoi(string(f[2]))
	st.Flags, errs[2] = strconv.ParseUint(string(f[6]), 10, 64)
	st.UTicks, errs[3] = strconv.ParseUint(string(f[11]), 10, 64)
	st.STicks, errs[4] = strconv.ParseUint(string(f[12]), 10, 64)
	st.StartTicks, errs[5] = strconv.ParseUint(string(f[19]), 10, 64)
	for _, err := range errs {
		if err != nil {
			return Stat{}, fmt.Errorf("stat of %d: malformed: %w", id, err)
		}
	}
	if len(f) > 36 {
		cpu, err := strconv.Atoi(string(f[36]))
		if err != nil {
			return Stat{}, fmt.Errorf("stat of %d: malformed processor: %w", id, err)
		}
		st.Processor = cpu
	}
	return st, nil
}

// Schedstat is /proc/PID/task/TID/schedstat: the thread's time on a CPU
// and its time runnable but waiting for one, in nanoseconds.
type Schedstat struct {
	RunNs, DelayNs uint64
}

// ReadSchedstat reads a thread's schedstat. It fails where the kernel
// has no schedstat (CONFIG_SCHED_INFO off).
func ReadSchedstat(pid, tid int) (Schedstat, error) {
	b, err := os.ReadFile(Root + "/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/schedstat")
	if err != nil {
		return Schedstat{}, err
	}
	return ParseSchedstat(b)
}

// ParseSchedstat parses "run_ns delay_ns timeslices".
func ParseSchedstat(b []byte) (Schedstat, error) {
	f := bytes.Fields(b)
	if len(f) < 2 {
		return Schedstat{}, fmt.Errorf("schedstat: malformed %q", b)
	}
	run, err1 := strconv.ParseUint(string(f[0]), 10, 64)
	delay, err2 := strconv.ParseUint(string(f[1]), 10, 64)
	if err1 != nil || err2 != nil {
		return Schedstat{}, fmt.Errorf("schedstat: malformed %q", b)
	}
	return Schedstat{RunNs: run, DelayNs: delay}, nil
}

// Pids lists every process in /proc.
func Pids() ([]int, error) {
	return numbered(Root)
}

// Tasks lists the threads of pid; empty (no error) when pid is gone.
func Tasks(pid int) []int {
	tids, _ := numbered(Root + "/" + strconv.Itoa(pid) + "/task")
	return tids
}

// ThreadChildren lists the children that thread tid of pid forked (or
// that were reparented to it), from /proc/PID/task/TID/children, in the
// kernel's order; nil when the thread is gone or the kernel lacks the
// file.
func ThreadChildren(pid, tid int) []int {
	b, err := os.ReadFile(Root + "/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/children")
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range bytes.Fields(b) {
		if c, err := strconv.Atoi(string(f)); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// numbered lists the entries of dir whose names are numbers.
func numbered(dir string) ([]int, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	out := make([]int, 0, len(names))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		if v, err := strconv.Atoi(n); err == nil {
			out = append(out, v)
		}
	}
	return out, nil
}

// UptimeSeconds is /proc/uptime's first field: seconds since boot, the
// clock StartTicks counts on.
func UptimeSeconds() (float64, error) {
	b, err := os.ReadFile(Root + "/uptime")
	if err != nil {
		return 0, err
	}
	f := bytes.Fields(b)
	if len(f) < 1 {
		return 0, fmt.Errorf("/proc/uptime: malformed %q", b)
	}
	return strconv.ParseFloat(string(f[0]), 64)
}

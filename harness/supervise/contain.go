package supervise

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ceiling-bench/ceiling/pinning"
)

// MarkerEnv is the variable every supervised child (and so everything it
// starts, unless it clears its environment) carries:
// "OWNERPID.OWNERSTART/SEQ", the harness that started it (pid and start
// time, which name one process across pid reuse) and the Proc's number.
// A process found with it after its Proc stopped escaped; one whose owner
// is dead is a leftover of a killed run.
const MarkerEnv = "CEILING_SUPERVISED"

// EscapedProcess is a process of a child's tree found alive after the
// child was stopped (and then SIGKILLed): it had left the supervisor's
// tree, by a way the subreaper cannot follow.
type EscapedProcess struct {
	Pid     int
	Command string // /proc/PID/comm
}

var (
	runIDOnce sync.Once
	runID     string
	procSeq   atomic.Int64
)

// RunID names this harness process: "PID.STARTTICKS" (just "PID" where
// the start time cannot be read). Cgroup names and MarkerEnv carry it.
func RunID() string {
	runIDOnce.Do(func() {
		runID = strconv.Itoa(os.Getpid())
		if st, err := ReadStat(os.Getpid()); err == nil {
			runID += "." + strconv.FormatUint(st.StartTicks, 10)
		}
	})
	return runID
}

// CgroupName is the name of a cgroup this harness creates: kind ("contain",
// "headroom") and a number, with RunID, so that a later run can tell
// whether its owner still lives: "ceiling-KIND-PID.START-SEQ".
func CgroupName(kind string, seq int) string {
	return fmt.Sprintf("ceiling-%s-%s-%d", kind, RunID(), seq)
}

// Names of cgroups made by this project: the current form, and the
// headroom probe's before the run id had a start time.
var (
	cgroupNameRE    = regexp.MustCompile(`^ceiling-[a-z]+-([0-9]+)\.([0-9]+)-[0-9]+$`)
	oldHeadroomName = regexp.MustCompile(`^ceiling-headroom-([0-9]+)-[0-9]+$`)
	markerRE        = regexp.MustCompile(`^([0-9]+)(?:\.([0-9]+))?/[0-9]+$`)
)

// ownerAlive reports whether the harness named by pid and start ticks
// (start "" = unknown) still runs.
func ownerAlive(pid, start string) bool {
	n, err := strconv.Atoi(pid)
	if err != nil {
		return false
	}
	st, err := ReadStat(n)
	if err != nil || st.State == 'Z' {
		return false
	}
	return start == "" || start == strconv.FormatUint(st.StartTicks, 10)
}

// containment is what Start set up around one child beyond the supervisor.
type containment struct {
	marker  string             // MarkerEnv's value
	cgroup  *pinning.Container // nil: no writable cgroup
	owned   bool               // we created cgroup (remove it at stop)
	escaped []EscapedProcess
}

// newContainment picks the marker and, where cgroups are writable, the
// cgroup the child's tree is held in: the throttle itself when it is a
// cgroup v2 one (a process is in one v2 cgroup only), else a new one.
func newContainment(throttle string) *containment {
	seq := int(procSeq.Add(1))
	c := &containment{marker: RunID() + "/" + strconv.Itoa(seq)}
	if !pinning.Supported {
		return c
	}
	if throttle != "" && pinning.IsCgroup2(throttle) {
		if cg, err := pinning.ContainerAt(throttle); err == nil {
			c.cgroup = cg
		}
		return c
	}
	if cg, err := pinning.NewContainer(CgroupName("contain", seq)); err == nil {
		c.cgroup, c.owned = cg, true
	}
	return c
}

// sweep kills and records whatever of the child's tree is still alive
// after its supervisor exited: processes left in its cgroup, and processes
// anywhere that carry its marker. Then it removes the cgroup it made.
func (c *containment) sweep() error {
	seen := map[int]bool{}
	record := func(pids []int) {
		for _, pid := range pids {
			if pid == os.Getpid() || seen[pid] || !Alive(pid) {
				continue
			}
			seen[pid] = true
			c.escaped = append(c.escaped, EscapedProcess{Pid: pid, Command: comm(pid)})
		}
	}
	var errs []error
	if c.cgroup != nil {
		procs, _ := c.cgroup.Procs()
		record(procs)
		if len(procs) > 0 {
			if err := c.cgroup.Kill(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	marked := withMarker(func(v string) bool { return v == c.marker })
	record(marked)
	for _, pid := range marked {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if err := waitGone(marked, killWait); err != nil {
		errs = append(errs, err)
	}
	if c.owned {
		// A cgroup left behind does not unmake the point: the next run's
		// CleanLeftovers removes it.
		_ = c.cgroup.Remove()
	}
	slices.SortFunc(c.escaped, func(a, b EscapedProcess) int { return a.Pid - b.Pid })
	if len(errs) > 0 {
		return fmt.Errorf("escaped processes: %w", errors.Join(errs...))
	}
	return nil
}

// withMarker lists the live processes whose MarkerEnv value satisfies
// match (this process excluded).
func withMarker(match func(value string) bool) []int {
	all, err := AllProcs()
	if err != nil {
		return nil
	}
	var out []int
	for _, p := range all {
		if p.Pid == os.Getpid() || p.State == 'Z' {
			continue
		}
		if v, ok := environValue(p.Pid, MarkerEnv); ok && match(v) {
			out = append(out, p.Pid)
		}
	}
	return out
}

// environValue reads one variable from /proc/PID/environ (the environment
// the process was exec'ed with).
func environValue(pid int, key string) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", false
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// comm is the process's command name, "?" once it is gone.
func comm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// waitGone waits until none of pids is alive.
func waitGone(pids []int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		var left []int
		for _, p := range pids {
			if Alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%v still alive %s after SIGKILL", left, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Leftover is something an earlier, killed run left behind, found and
// removed by CleanLeftovers.
type Leftover struct {
	Kind    string // "process" or "cgroup"
	Pid     int    // process
	Command string // process: its command name
	Path    string // cgroup: its directory
	Owner   string // the dead harness: "PID" or "PID.START"
}

func (l Leftover) String() string {
	if l.Kind == "cgroup" {
		return "cgroup " + l.Path
	}
	return fmt.Sprintf("process %d (%s)", l.Pid, l.Command)
}

// CleanLeftovers finds what an earlier run that was killed outright left
// behind, kills and removes it, and says what it was: processes carrying
// MarkerEnv whose owner no longer runs (a supervisor that was SIGKILLed
// too, and what it started), and cgroups named by CgroupName (or the
// headroom probe's older names) whose owner no longer runs. A supervisor
// of a dead harness that is still stopping its tree is given its grace
// (up to DefaultGrace and 2 s) first. What belongs to a harness that is
// still running, this one or another, is left alone.
func CleanLeftovers() ([]Leftover, error) {
	dead := func(v string) bool {
		m := markerRE.FindStringSubmatch(v)
		return m != nil && !ownerAlive(m[1], m[2])
	}
	awaitDeadSupervisors(dead)
	killed := map[int]bool{}
	out, errs := killMarked(dead, killed)
	cg, cgErrs := removeDeadCgroups(killed)
	out, errs = append(out, cg...), append(errs, cgErrs...)
	if len(errs) > 0 {
		return out, fmt.Errorf("clean up after an earlier run: %w", errors.Join(errs...))
	}
	return out, nil
}

// awaitDeadSupervisors waits while a supervisor whose harness just died
// (its marker dead) is still up: it is stopping its tree and will remove
// its cgroups, within its grace (at most DefaultGrace).
func awaitDeadSupervisors(dead func(string) bool) {
	deadline := time.Now().Add(DefaultGrace + 2*time.Second)
	for time.Now().Before(deadline) {
		busy := false
		for _, pid := range withMarker(dead) {
			busy = busy || comm(pid) == pinning.SupervisorComm
		}
		if !busy {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// killMarked SIGKILLs every process whose marker is dead, again while
// killing a parent reveals more (bounded), and reports each once,
// recording it in killed.
func killMarked(dead func(string) bool, killed map[int]bool) (out []Leftover, errs []error) {
	for range 50 { // killing a parent may reveal no one new, but bound it
		pids := withMarker(dead)
		var fresh []int
		for _, pid := range pids {
			if !killed[pid] {
				killed[pid] = true
				v, _ := environValue(pid, MarkerEnv)
				owner, _, _ := strings.Cut(v, "/")
				out = append(out, Leftover{Kind: "process", Pid: pid, Command: comm(pid), Owner: owner})
			}
			fresh = append(fresh, pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if len(fresh) == 0 {
			break
		}
		if err := waitGone(fresh, killWait); err != nil {
			errs = append(errs, err)
			break
		}
	}
	return out, errs
}

// removeDeadCgroups kills what is left in each cgroup of ceiling's whose
// owner is dead, and removes it, reporting each process (not already in
// killed) and each cgroup.
func removeDeadCgroups(killed map[int]bool) (out []Leftover, errs []error) {
	for _, parent := range pinning.CgroupParents() {
		ents, err := os.ReadDir(parent.Dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			owner, ok := deadCgroupOwner(e)
			if !ok {
				continue
			}
			dir := parent.Dir + "/" + e.Name()
			if cg, err := pinning.ContainerAt(dir); err == nil {
				if procs, _ := cg.Procs(); len(procs) > 0 {
					for _, pid := range procs {
						if !killed[pid] {
							killed[pid] = true
							out = append(out, Leftover{Kind: "process", Pid: pid, Command: comm(pid), Owner: owner})
						}
					}
					if err := cg.Kill(); err != nil {
						errs = append(errs, err)
					}
				}
			}
			if err := pinning.RemoveCgroup(dir); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", dir, err))
				continue
			}
			out = append(out, Leftover{Kind: "cgroup", Path: dir, Owner: owner})
		}
	}
	return out, errs
}

// deadCgroupOwner is the owner a cgroup of ceiling's is named after, when
// that owner is dead: false for another directory, or a live owner's.
func deadCgroupOwner(e os.DirEntry) (string, bool) {
	if !e.IsDir() || !strings.HasPrefix(e.Name(), "ceiling-") {
		return "", false
	}
	if m := cgroupNameRE.FindStringSubmatch(e.Name()); m != nil {
		return m[1] + "." + m[2], !ownerAlive(m[1], m[2])
	}
	if m := oldHeadroomName.FindStringSubmatch(e.Name()); m != nil {
		return m[1], !ownerAlive(m[1], "")
	}
	return "", false
}

// DescribeLeftovers is the warning for what CleanLeftovers removed, ""
// for nothing. It says what was done to each: a process was killed, a
// cgroup removed; an earlier run that left only empty cgroups killed
// nothing, and the warning says "removed" alone.
func DescribeLeftovers(left []Leftover) string {
	if len(left) == 0 {
		return ""
	}
	owners := map[string]bool{}
	var killed, removed []string
	for _, l := range left {
		owners[l.Owner] = true
		if l.Kind == "cgroup" {
			removed = append(removed, l.Path)
		} else {
			killed = append(killed, l.String())
		}
	}
	var names []string
	for o := range owners {
		names = append(names, o)
	}
	slices.Sort(names)
	var done []string
	if len(killed) > 0 {
		done = append(done, "killed "+strings.Join(killed, ", "))
	}
	if len(removed) > 0 {
		what := "removed the cgroup"
		if len(removed) > 1 {
			what += "s"
		}
		if len(killed) == 0 {
			what = "removed the empty cgroup"
			if len(removed) > 1 {
				what = "removed the empty cgroups"
			}
		}
		done = append(done, what+" "+strings.Join(removed, ", "))
	}
	return fmt.Sprintf("an earlier run (harness %s) ended without cleaning up: %s",
		strings.Join(names, ", "), strings.Join(done, "; "))
}

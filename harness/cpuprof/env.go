package cpuprof

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Env is what profiling asks of the machine: the seam a unit test
// scripts. Real is the machine's own.
type Env struct {
	// LookPath finds perf (exec.LookPath).
	LookPath func(file string) (string, error)
	// Paranoid reads kernel.perf_event_paranoid.
	Paranoid func() (int, error)
	// Euid is the user perf would run as.
	Euid func() int
	// Now is the clock the sampled span is measured on.
	Now func() time.Time
	// Script symbolises a perf recording: `perf script` on it, the
	// samples of pids only.
	Script func(ctx context.Context, perf, data string, pids []int) ([]byte, error)
}

// ParanoidPath is the sysctl Real reads.
const ParanoidPath = "/proc/sys/kernel/perf_event_paranoid"

// Real is the machine's Env.
func Real() Env {
	return Env{
		LookPath: exec.LookPath,
		Paranoid: func() (int, error) {
			b, err := os.ReadFile(ParanoidPath)
			if err != nil {
				return 0, err
			}
			return strconv.Atoi(strings.TrimSpace(string(b)))
		},
		Euid:   os.Geteuid,
		Now:    time.Now,
		Script: perfScript,
	}
}

// scriptTimeout bounds one `perf script`.
const scriptTimeout = 2 * time.Minute

// ScriptFields are the fields Diff asks `perf script` for: what
// profdiff.ParsePerfScript reads.
const ScriptFields = "comm,tid,time,period,event,ip,sym,dso,symoff"

// perfScript runs `perf script` on data, pids' samples only, and
// returns what it printed.
func perfScript(ctx context.Context, perf, data string, pids []int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, perf, "script", "-i", data, "-F", ScriptFields, "--no-inline", "--pid", joinInts(pids))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("perf script -i %s: %v: %s", data, err, lastLine(stderr.String()))
	}
	return out, nil
}

// lastLine is the last non-empty line of s, at most 300 bytes.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 300 {
		l = l[:300] + "..."
	}
	return l
}

// Plan is what Check decided: the perf to run and its event, or why
// perf cannot profile (Reason).
type Plan struct {
	Perf   string
	Event  string
	Reason string
	// SystemWide: perf may sample whole CPUs (root, or
	// perf_event_paranoid 0 or less), so it samples the servers' CPUs
	// rather than attach to their threads, which it could miss one of.
	SystemWide bool
	// Note is said beside a profile taken (user space only).
	Note string
}

// Check decides whether perf can profile other processes here: found on
// PATH, and permitted by kernel.perf_event_paranoid for this user (root
// is always permitted; another user not at 3 or more, which Debian's
// kernels read as no unprivileged use at all, and only in user space at
// 2). An unreadable paranoid setting is no reason: perf says its own.
func Check(env Env) Plan {
	perf, err := env.LookPath("perf")
	if err != nil {
		return Plan{Reason: "perf is not installed (not on PATH: Debian's linux-perf, or your distribution's perf package, provides it)"}
	}
	p := Plan{Perf: perf, Event: "cpu-clock"}
	if env.Euid() == 0 {
		p.SystemWide = true
		return p
	}
	level, err := env.Paranoid()
	switch {
	case err != nil:
	case level <= 0:
		p.SystemWide = true
	case level >= 3:
		return Plan{Reason: fmt.Sprintf("perf is not permitted: kernel.perf_event_paranoid is %d, which allows no profiling to a user other than root (run as root, give perf CAP_PERFMON, or sysctl kernel.perf_event_paranoid=2)", level)}
	case level == 2:
		p.Event = "cpu-clock:u"
		p.Note = "kernel.perf_event_paranoid is 2: user space only (the kernel's share of the servers' CPU is not in the profile)"
	}
	return p
}

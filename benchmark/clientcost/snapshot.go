package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/procfs"
)

// snapshot is everything read at one instant (A or B) of a run.
type snapshot struct {
	At          time.Time
	Messages    uint64 // refserver_messages_received_total
	ServerRunNs uint64 // server tasks' schedstat run time
	ServerWait  uint64 // server tasks' schedstat run-queue wait, ns
	ServerVolSw uint64 // server tasks' voluntary context switches
	CPUBusy     uint64 // server CPU: user+nice+system+irq+softirq jiffies
	CPUSoftirq  uint64 // server CPU: softirq jiffies
	ClientIPI   uint64 // RES+CAL on the client's CPU
	ServerIPI   uint64 // RES+CAL on the server's CPU
	TCP         map[string]tcpCounters
	HasTCP      bool // ss ran
	ClientRunNs uint64
}

// tcpCounters are one socket's counters as ss prints them.
type tcpCounters struct {
	SegsIn, SegsOut, DataSegsIn, DataSegsOut uint64
}

// target is what a snapshot reads: the server's pid, port and metrics
// URL, the client's pid, and the two CPUs.
type target struct {
	serverPid, clientPid int
	port                 string
	metricsURL           string
	serverCPU, clientCPU int
}

var metricsClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// readCounter fetches the server's received-message counter.
func readCounter(url string) (uint64, error) {
	resp, err := metricsClient.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, err
	}
	return parseCounter(b, "refserver_messages_received_total")
}

// parseCounter finds `name VALUE` in a Prometheus text exposition.
func parseCounter(b []byte, name string) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == name {
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return 0, fmt.Errorf("metric %s: %w", name, err)
			}
			return uint64(v), nil
		}
	}
	return 0, fmt.Errorf("metric %s not found", name)
}

// take reads a snapshot; the server's counter first and its CPU right
// after, so the two describe the same instant as nearly as possible.
func take(t target) (snapshot, error) {
	var s snapshot
	var err error
	if s.Messages, err = readCounter(t.metricsURL); err != nil {
		return s, fmt.Errorf("metrics: %w", err)
	}
	s.At = time.Now()
	if s.ServerRunNs, s.ServerWait, err = taskSchedstat(t.serverPid); err != nil {
		return s, fmt.Errorf("server schedstat: %w", err)
	}
	if s.ServerVolSw, err = taskVolSwitches(t.serverPid); err != nil {
		return s, fmt.Errorf("server status: %w", err)
	}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, err
	}
	if s.CPUBusy, s.CPUSoftirq, err = parseCPUStat(b, t.serverCPU); err != nil {
		return s, err
	}
	if b, err = os.ReadFile("/proc/interrupts"); err != nil {
		return s, err
	}
	ipi, err := parseIPIs(b)
	if err != nil {
		return s, err
	}
	s.ClientIPI, s.ServerIPI = ipi[t.clientCPU], ipi[t.serverCPU]
	if out, err := exec.Command("ss", "-tinH", "state", "established", "( sport = :"+t.port+" )").Output(); err == nil {
		s.TCP, s.HasTCP = parseSS(out), true
	}
	if s.ClientRunNs, _, err = taskSchedstat(t.clientPid); err != nil {
		return s, fmt.Errorf("client schedstat: %w", err)
	}
	return s, nil
}

// taskSchedstat sums fields 1 and 2 (time on a CPU and time runnable
// waiting for one, ns) of every thread's schedstat.
func taskSchedstat(pid int) (run, wait uint64, err error) {
	var files [][]byte
	for _, tid := range procfs.Tasks(pid) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/schedstat", pid, tid))
		if err != nil {
			continue // the thread ended meanwhile
		}
		files = append(files, b)
	}
	if len(files) == 0 {
		return 0, 0, fmt.Errorf("pid %d: no readable task schedstat", pid)
	}
	return sumSchedstat(files)
}

// sumSchedstat sums the run and wait times of several schedstat files.
func sumSchedstat(files [][]byte) (run, wait uint64, err error) {
	for _, b := range files {
		ss, err := procfs.ParseSchedstat(b)
		if err != nil {
			return 0, 0, err
		}
		run += ss.RunNs
		wait += ss.DelayNs
	}
	return run, wait, nil
}

// taskVolSwitches sums voluntary_ctxt_switches over every thread's
// status (/proc/PID/status alone counts the main thread only).
func taskVolSwitches(pid int) (uint64, error) {
	var sum uint64
	n := 0
	for _, tid := range procfs.Tasks(pid) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, tid))
		if err != nil {
			continue
		}
		st, err := procfs.ParseStatus(b)
		if err != nil {
			return 0, err
		}
		sum += st.VoluntaryCtxtSwitches
		n++
	}
	if n == 0 {
		return 0, fmt.Errorf("pid %d: no readable task status", pid)
	}
	return sum, nil
}

// parseCPUStat reads line cpuN of /proc/stat: busy is user + nice +
// system + irq + softirq (idle, iowait and steal left out), in jiffies.
func parseCPUStat(b []byte, cpu int) (busy, softirq uint64, err error) {
	name := "cpu" + strconv.Itoa(cpu)
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20) // the intr line is long
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != name {
			continue
		}
		if len(f) < 8 {
			return 0, 0, fmt.Errorf("/proc/stat %s: %d fields, want >= 7 counters", name, len(f)-1)
		}
		var v [7]uint64
		for i := range v {
			if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
				return 0, 0, fmt.Errorf("/proc/stat %s: %w", name, err)
			}
		}
		// user nice system idle iowait irq softirq
		return v[0] + v[1] + v[2] + v[5] + v[6], v[6], nil
	}
	return 0, 0, fmt.Errorf("/proc/stat: no %s line", name)
}

// parseIPIs sums the RES and CAL rows of /proc/interrupts per CPU. The
// header names the columns (CPU0 CPU1 ...; an offline CPU has none).
func parseIPIs(b []byte) (map[int]uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() {
		return nil, errors.New("/proc/interrupts: empty")
	}
	var cols []int
	for _, h := range strings.Fields(sc.Text()) {
		n, err := strconv.Atoi(strings.TrimPrefix(h, "CPU"))
		if err != nil || !strings.HasPrefix(h, "CPU") {
			return nil, fmt.Errorf("/proc/interrupts: header column %q", h)
		}
		cols = append(cols, n)
	}
	out := map[int]uint64{}
	seen := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || (f[0] != "RES:" && f[0] != "CAL:") {
			continue
		}
		if len(f) < 1+len(cols) {
			return nil, fmt.Errorf("/proc/interrupts %s: %d counts for %d CPUs", f[0], len(f)-1, len(cols))
		}
		for i, cpu := range cols {
			v, err := strconv.ParseUint(f[1+i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("/proc/interrupts %s: %w", f[0], err)
			}
			out[cpu] += v
		}
		seen++
	}
	if seen != 2 {
		return nil, fmt.Errorf("/proc/interrupts: %d of the RES and CAL rows found", seen)
	}
	return out, nil
}

// parseSS reads `ss -tinH` output: a line per socket (Recv-Q Send-Q
// Local Peer) followed by an indented line of its counters. Sockets are
// keyed by their addresses.
func parseSS(b []byte) map[string]tcpCounters {
	out := map[string]tcpCounters{}
	key := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.TrimSpace(l) == "" {
			continue
		}
		if l[0] != ' ' && l[0] != '\t' {
			f := strings.Fields(l)
			key = strings.Join(f, " ")
			if len(f) >= 4 {
				key = f[len(f)-2] + " " + f[len(f)-1]
			}
			out[key] = tcpCounters{}
			continue
		}
		if key == "" {
			continue
		}
		c := out[key]
		for _, tok := range strings.Fields(l) {
			k, v, ok := strings.Cut(tok, ":")
			if !ok {
				continue
			}
			var dst *uint64
			switch k {
			case "segs_in":
				dst = &c.SegsIn
			case "segs_out":
				dst = &c.SegsOut
			case "data_segs_in":
				dst = &c.DataSegsIn
			case "data_segs_out":
				dst = &c.DataSegsOut
			default:
				continue
			}
			if n, err := strconv.ParseUint(v, 10, 64); err == nil {
				*dst = n
			}
		}
		out[key] = c
	}
	return out
}

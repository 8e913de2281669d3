package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ceiling-bench/ceiling/internal/procfs"
	"github.com/ceiling-bench/ceiling/pinning"
)

// placement is which CPU the measured client and its server get.
type placement struct {
	gen, srv pinning.CPUSet
	note     string
}

// pickCPUs takes the first two CPUs we may run on: generator on the first,
// server on the second. With one CPU nothing is pinned, and the report says
// the figures then share a core.
func pickCPUs() placement {
	if cpus, err := pinning.Granted(0); err == nil && len(cpus) >= 2 {
		return placement{gen: pinning.CPUSet{cpus[0]}, srv: pinning.CPUSet{cpus[1]}}
	}
	return placement{note: "fewer than 2 CPUs available: nothing pinned, client and server share a core"}
}

func orchestrate(o options, stdout io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	pl := pickCPUs()
	fmt.Fprintf(stdout, "ceiling efficiency report  %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(stdout, "machine: %s, %d logical CPUs, %s, %s/%s\n", cpuModel(), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(stdout, "client pinned to cpu %s (GOMAXPROCS=1), server to cpu %s; window %s after %s warm-up; every figure is from this run\n",
		orDash(pl.gen), orDash(pl.srv), o.duration, o.warmup)
	if pl.note != "" {
		fmt.Fprintln(stdout, "NOTE:", pl.note)
	}
	fmt.Fprintln(stdout)
	if o.memOnly {
		return memSection(o, stdout, pl)
	}

	if o.only == "echo" {
		return echoSection(o, stdout, self, pl)
	}
	if err := pairSection(o, stdout, self, pl, "stream", "recv",
		fmt.Sprintf("1. Receive path: %d-byte messages one core absorbs from a server streaming pre-framed messages", o.size),
		map[string]string{"gorilla": "gorilla NextReader + io.Copy(io.Discard)", "wsconn": "wsconn ReadMessage"},
		"target >= 2.00x"); err != nil {
		return fmt.Errorf("receive path: %w", err)
	}
	if err := pairSection(o, stdout, self, pl, "sink", "send",
		fmt.Sprintf("2. Send path: %d-byte frames one core writes at batch %d to a sink that discards", o.size, o.batch),
		map[string]string{"gorilla": "gorilla WriteMessage (a write per frame)", "wsconn": "wsconn WriteBatch (a write per batch)"},
		""); err != nil {
		return fmt.Errorf("send path: %w", err)
	}
	if o.skipEcho {
		return nil
	}
	if err := echoSection(o, stdout, self, pl); err != nil {
		return err
	}
	if err := scenarioSection(o, stdout, pl); err != nil {
		return err
	}
	if err := natsSection(o, stdout, pl); err != nil {
		return err
	}
	if o.skipMem {
		return nil
	}
	return memSection(o, stdout, pl)
}

// pairSection runs gorilla then wsconn against one server, -reps times
// interleaved, and prints each repetition and its ratio.
func pairSection(o options, stdout io.Writer, self string, pl placement, serverRole, clientRole, title string, label map[string]string, target string) error {
	srv, err := startProc(serverRole+" server", pl.srv, nil, self, "-role", serverRole, "-size", fmt.Sprint(o.size))
	if err != nil {
		return err
	}
	defer srv.kill()
	addr, err := srv.expect("ready ", 10*time.Second)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, title)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rep\timplementation\tmsg/s\tCPU cores\tmsg per CPU-s\tuser ns/msg\tsys ns/msg\treads/msg\trunq\t")
	var ratios, cpuRatios, notes []string
	for rep := 1; rep <= o.reps; rep++ {
		rate, perCPU := map[string]float64{}, map[string]float64{}
		for _, impl := range []string{"gorilla", "wsconn"} {
			cl, err := startProc(clientRole+" "+impl, pl.gen, []string{"GOMAXPROCS=1"}, self,
				"-role", clientRole, "-impl", impl, "-url", "ws://"+addr+"/", "-size", fmt.Sprint(o.size),
				"-batch", fmt.Sprint(o.batch), "-duration", o.duration.String(), "-warmup", o.warmup.String())
			if err != nil {
				return err
			}
			r, err := cl.result(o.warmup + o.duration + 30*time.Second)
			cl.kill()
			if err != nil {
				return err
			}
			msgs := float64(r.Messages)
			rate[impl] = msgs / r.Seconds
			perCPU[impl] = msgs / (r.UserS + r.SysS)
			reads := "-"
			if clientRole == "recv" {
				reads = fmt.Sprintf("%.5f", float64(r.Reads)/msgs)
			}
			if r.WaitS/r.Seconds > contended {
				notes = append(notes, fmt.Sprintf("rep %d %s waited %.2f s/s for a CPU: its msg/s measures other load on the core; read msg per CPU-s", rep, impl, r.WaitS/r.Seconds))
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.2f\t%s\t%.1f\t%.1f\t%s\t%.2f\t\n", rep, label[impl], si(rate[impl]),
				(r.UserS+r.SysS)/r.Seconds, si(perCPU[impl]), r.UserS*1e9/msgs, r.SysS*1e9/msgs, reads, r.WaitS/r.Seconds)
		}
		ratios = append(ratios, fmt.Sprintf("%.2fx", rate["wsconn"]/rate["gorilla"]))
		cpuRatios = append(cpuRatios, fmt.Sprintf("%.2fx", perCPU["wsconn"]/perCPU["gorilla"]))
	}
	tw.Flush()
	fmt.Fprintf(stdout, "   wsconn / gorilla per repetition: msg/s %s; msg per CPU-second %s", strings.Join(ratios, ", "), strings.Join(cpuRatios, ", "))
	if target != "" {
		fmt.Fprintf(stdout, "  (%s)", target)
	}
	fmt.Fprintln(stdout)
	for _, n := range notes {
		fmt.Fprintln(stdout, "NOTE:", n)
	}
	fmt.Fprintln(stdout)
	return nil
}

// contended is the run-queue wait, in seconds per second, above which a
// point's throughput says more about the machine than about the code.
const contended = 0.5

func si(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f k", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func orDash(s pinning.CPUSet) string {
	if len(s) == 0 {
		return "-"
	}
	return s.String()
}

func cpuModel() string {
	if m, ok := procfs.CPUModel(); ok {
		return m
	}
	return "unknown CPU"
}

package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/procfs"
	"github.com/ceiling-bench/ceiling/pinning"
	"golang.org/x/sys/unix"
)

func main() {
	pinning.Init() // the trampoline that pins our children before exec
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "clientcost:", err)
		os.Exit(1)
	}
}

type options struct {
	refserver, ceiling, nodeGen string
	reps                        int
	duration, warmup            time.Duration
	conns, batch, size          int
	clients                     []string
	jsonPath                    string

	// the gorilla role's own flags
	role, variant, url string
	run                time.Duration
}

// allClients is every client, in the table's order.
var allClients = []string{"ceiling", "ceiling-eager", "ceiling-goroutines", "ceiling-busypoll", "node",
	"gorilla-batch", "gorilla-frame", "gorilla-nodelay-off", "gorilla-quickack", "gorilla-smallbuf"}

func run(args []string, stdout, stderr io.Writer) error {
	var o options
	var clients string
	fs := flag.NewFlagSet("clientcost", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.refserver, "refserver", "bin/refserver", "the refserver binary")
	fs.StringVar(&o.ceiling, "ceiling", "bin/ceiling", "the ceiling binary (ceiling* clients)")
	fs.StringVar(&o.nodeGen, "node-gen", "benchmark/generators/node/gen.js", "the Node generator (node client)")
	fs.IntVar(&o.reps, "reps", 3, "rounds; each runs every client once, the order rotated by one per round")
	fs.DurationVar(&o.duration, "duration", 3*time.Second, "measured window of each run")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "time after the server's counter starts rising, before the window")
	fs.IntVar(&o.conns, "conns", 16, "connections")
	fs.IntVar(&o.batch, "batch", 10, "messages per batch (closed loop: a batch, then its replies)")
	fs.IntVar(&o.size, "size", 256, "payload bytes per message")
	fs.StringVar(&clients, "clients", strings.Join(allClients, ","), "comma list of clients: "+strings.Join(allClients, ", "))
	fs.StringVar(&o.jsonPath, "json", "", "write every run and the table as JSON to this file")
	fs.StringVar(&o.role, "role", "", "internal: run as a child role (gorilla)")
	fs.StringVar(&o.variant, "variant", "batch", "internal: gorilla variant (batch, frame, nodelay-off, quickack, smallbuf)")
	fs.StringVar(&o.url, "url", "", "internal: ws:// URL of the gorilla role")
	fs.DurationVar(&o.run, "run", 0, "internal: how long the gorilla role drives load")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case o.reps < 1:
		return fmt.Errorf("-reps must be >= 1, got %d", o.reps)
	case o.duration <= 0 || o.warmup < 0:
		return fmt.Errorf("-duration must be > 0 and -warmup >= 0")
	case o.conns < 1 || o.batch < 1:
		return fmt.Errorf("-conns and -batch must be >= 1")
	case o.size < 1 || o.size > 1<<20:
		return fmt.Errorf("-size must be 1..1048576, got %d", o.size)
	}
	if o.role == "gorilla" {
		return gorillaRole(o, stdout)
	}
	if o.role != "" {
		return fmt.Errorf("-role %q: unknown", o.role)
	}
	for _, c := range strings.Split(clients, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		if !slices.Contains(allClients, c) {
			return fmt.Errorf("-clients: unknown client %q (have %s)", c, strings.Join(allClients, ", "))
		}
		if !slices.Contains(o.clients, c) {
			o.clients = append(o.clients, c)
		}
	}
	if len(o.clients) == 0 {
		return errors.New("-clients: none selected")
	}
	return orchestrate(o, stdout)
}

// report is the -json document.
type report struct {
	Date      string      `json:"date"`
	Machine   string      `json:"machine"`
	Kernel    string      `json:"kernel"`
	ClientCPU int         `json:"client_cpu"`
	ServerCPU int         `json:"server_cpu"`
	Point     string      `json:"point"`
	Notes     []string    `json:"notes,omitempty"`
	Runs      []runResult `json:"runs"`
	Table     []row       `json:"table"`
}

func orchestrate(o options, stdout io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if o.refserver, err = filepath.Abs(o.refserver); err != nil {
		return err
	}
	if _, err := os.Stat(o.refserver); err != nil {
		return fmt.Errorf("-refserver: %w (run `make build`)", err)
	}
	o.ceiling, _ = filepath.Abs(o.ceiling)
	o.nodeGen, _ = filepath.Abs(o.nodeGen)
	killOnSignal()
	pl := pickCPUs()
	rep := report{
		Date: time.Now().UTC().Format(time.RFC3339), Machine: machine(), Kernel: kernel(),
		ClientCPU: pl.client, ServerCPU: pl.server,
		Point: fmt.Sprintf("echo, %d connections, batch %d, %d-byte messages, closed loop; %s warm-up, %s window, %d rounds",
			o.conns, o.batch, o.size, o.warmup, o.duration, o.reps),
	}
	if pl.note != "" {
		rep.Notes = append(rep.Notes, pl.note)
	} else if err := pinSelf(pl.client); err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("could not pin this program to cpu %d (%v): its polling may land on the server's CPU", pl.client, err))
	}
	skipped := map[string]string{}
	var clients []string
	for _, c := range o.clients {
		if why := unavailable(o, c); why != "" {
			skipped[c] = why
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s skipped: %s", c, why))
			continue
		}
		clients = append(clients, c)
	}
	if _, err := exec.LookPath("ss"); err != nil {
		rep.Notes = append(rep.Notes, "ss not found: the TCP segment columns print -")
	}
	fmt.Fprintf(stdout, "clientcost: what each client's I/O pattern costs refserver /echo  %s\n", rep.Date)
	fmt.Fprintf(stdout, "machine: %s, %d logical CPUs; kernel: %s\n", rep.Machine, runtime.NumCPU(), rep.Kernel)
	fmt.Fprintf(stdout, "point: %s\n", rep.Point)
	fmt.Fprintf(stdout, "server (fresh refserver per run, GOMAXPROCS=1) on cpu %d, client (GOMAXPROCS=1) on cpu %d; every figure from the server's side\n", pl.server, pl.client)
	for _, n := range rep.Notes {
		fmt.Fprintln(stdout, "NOTE:", n)
	}
	fmt.Fprintln(stdout)
	hz := float64(procfs.ClockTicks) // USER_HZ, the unit of /proc/stat
	for r := range o.reps {
		for _, c := range rotate(clients, r) {
			res := runOne(o, pl, self, c, hz)
			res.Round = r + 1
			rep.Runs = append(rep.Runs, res)
			fmt.Fprintln(stdout, runLine(res, o.reps))
		}
	}
	rep.Table = summarize(o.clients, rep.Runs, skipped)
	fmt.Fprintln(stdout)
	fmt.Fprintf(stdout, "machine: %s; kernel: %s; %s\n", rep.Machine, rep.Kernel, rep.Date)
	fmt.Fprintf(stdout, "point: %s; server cpu %d, client cpu %d\n\n", rep.Point, pl.server, pl.client)
	fmt.Fprint(stdout, renderTable(rep.Table))
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, "srv msg/CPU-s: messages per busy second of the server's CPU (user+nice+system+irq+softirq, /proc/stat), so softirq")
	fmt.Fprintln(stdout, "work done there for either end counts; srv msg/task-s: per second of the server's own threads (schedstat).")
	fmt.Fprintln(stdout, "segs in: segments from the client (pure ACKs: without data); ACKs out: pure ACKs from the server (ss -ti);")
	fmt.Fprintln(stdout, "IPI→client: RES+CAL interrupts to the client's CPU (wake-ups); client-capped: client >= 0.9 cores, server CPU < 0.9 busy;")
	fmt.Fprintf(stdout, "contended: the server's threads waited > %.1f s/s for their CPU (other load there, counted in the CPU-busy basis).\n", contended)
	if o.jsonPath != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.jsonPath, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("-json: %w", err)
		}
	}
	return nil
}

func machine() string {
	if m, ok := procfs.CPUModel(); ok {
		return m
	}
	return "unknown CPU (" + runtime.GOARCH + ")"
}

func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return runtime.GOOS
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
}

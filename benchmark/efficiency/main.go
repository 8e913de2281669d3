package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/ceiling-bench/ceiling/pinning"
)

func main() {
	pinning.Init() // the trampoline that pins our children before exec
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "efficiency:", err)
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(1)
	}
}

type options struct {
	role        string
	duration    time.Duration
	echoDur     time.Duration
	warmup      time.Duration
	reps        int
	echoConns   int
	generator   string
	ceiling     string
	ceilingBase string
	refserver   string
	skipEcho    bool
	only        string
	roomsUsers  int
	memConns    string
	memIO       string
	memDur      time.Duration
	skipMem     bool
	memOnly     bool

	// role arguments
	impl  string
	url   string
	size  int
	batch int
	conns int

	cpuprofile string
	readAhead  bool
}

func run(args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("efficiency", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.role, "role", "", "internal: run as a child role (stream, sink, recv, send, echo, floor)")
	fs.DurationVar(&o.duration, "duration", 2*time.Second, "measured window of each point")
	fs.DurationVar(&o.echoDur, "echo-duration", 4*time.Second, "measured window of each refserver echo point (longer: the kernel counts CPU in 10 ms ticks)")
	fs.DurationVar(&o.warmup, "warmup", 500*time.Millisecond, "time before each window, excluded")
	fs.IntVar(&o.reps, "reps", 2, "interleaved repetitions of the receive and send comparisons")
	fs.IntVar(&o.echoConns, "echo-conns", 16, "connections of the refserver echo points")
	fs.StringVar(&o.generator, "generator", "auto", "echo generator: auto (bin/ceiling if present) | ceiling | builtin")
	fs.StringVar(&o.ceiling, "ceiling", "bin/ceiling", "the ceiling binary for -generator ceiling")
	fs.StringVar(&o.ceilingBase, "ceiling-base", "", "section 3 compares the event loops of this ceiling binary (a build before a change) and -ceiling's, alternately, twice per batch")
	fs.StringVar(&o.refserver, "refserver", "bin/refserver", "the refserver binary (built from ./cmd/refserver when missing)")
	fs.BoolVar(&o.skipEcho, "skip-echo", false, "skip the refserver echo points and the scenario-file section")
	fs.StringVar(&o.only, "only", "", "run only this section: echo (section 3, with the syscall-only floor)")
	fs.IntVar(&o.roomsUsers, "rooms-users", 200, "users of the rooms scenario file in section 4")
	fs.StringVar(&o.memConns, "mem-conns", "10000,20000", "connection counts of the memory section (6), comma separated")
	fs.StringVar(&o.memIO, "mem-io", "goroutines,loop", "echo --io modes of the memory section, comma separated")
	fs.DurationVar(&o.memDur, "mem-duration", 10*time.Second, "measured window of each memory point")
	fs.BoolVar(&o.skipMem, "skip-mem", false, "skip the memory section (6)")
	fs.BoolVar(&o.memOnly, "mem-only", false, "run only the memory section (6)")
	fs.StringVar(&o.impl, "impl", "wsconn", "internal: wsconn | gorilla")
	fs.StringVar(&o.url, "url", "", "internal: ws:// URL to connect to")
	fs.IntVar(&o.size, "size", 64, "payload bytes per message")
	fs.IntVar(&o.batch, "batch", 100, "internal: frames per write")
	fs.IntVar(&o.conns, "conns", 1, "internal: connections of the echo role")
	fs.BoolVar(&o.readAhead, "readahead", false, "internal: the echo role uses wsconn.ExpectBytes (SO_RCVLOWAT) per batch")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "internal: write a CPU profile of this role to the file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	switch {
	case o.duration <= 0:
		return fmt.Errorf("-duration must be > 0, got %s", o.duration)
	case o.memDur <= 0:
		return fmt.Errorf("-mem-duration must be > 0, got %s", o.memDur)
	case o.echoDur <= 0:
		return fmt.Errorf("-echo-duration must be > 0, got %s", o.echoDur)
	case o.warmup < 0:
		return fmt.Errorf("-warmup must be >= 0, got %s", o.warmup)
	case o.reps < 1:
		return fmt.Errorf("-reps must be >= 1, got %d", o.reps)
	case o.size < 1 || o.size > 1<<20:
		return fmt.Errorf("-size must be 1..1048576, got %d", o.size)
	case o.batch < 1 || o.echoConns < 1 || o.conns < 1:
		return fmt.Errorf("-batch, -echo-conns and -conns must be >= 1")
	}
	if o.only != "" && o.only != "echo" {
		return fmt.Errorf("-only must be echo or empty, got %q", o.only)
	}
	switch o.generator {
	case "auto", "ceiling", "builtin":
	default:
		return fmt.Errorf("-generator must be auto, ceiling or builtin, got %q", o.generator)
	}
	switch o.role {
	case "":
		return orchestrate(o, stdout)
	case "stream":
		return serveStream(o, stdout)
	case "sink":
		return serveSink(o, stdout)
	case "recv":
		return receive(o, stdout)
	case "send":
		return send(o, stdout)
	case "echo":
		return echoLoop(o, stdout)
	case "floor":
		return floorLoop(o, stdout)
	}
	return fmt.Errorf("-role %q: unknown", o.role)
}

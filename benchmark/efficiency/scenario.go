package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
)

// scenarioSection is section 4: what a declarative scenario file costs the
// generator per message it receives, beside echo's cost in the same run.
// Both are `ceiling load` pinned to the generator's core against one
// refserver pinned to the other: benchmark/scenarios/rooms.json (open
// loop, every message matched and its timestamp, sender and version read
// by the scanner), then echo in an open loop at the message rate rooms
// received, over as many connections (a message sent and one back, no
// parsing), so both pay the same wake-ups per message and the difference
// is the scenario engine. The figure is the generator's user and system
// CPU over the window divided by the messages it received. rooms runs
// twice, on the event loops (--io loop, the default) and on a reader and
// a writer goroutine per connection (--io goroutines), so the two engines
// are compared in the same run; the three run -reps times.
func scenarioSection(o options, stdout io.Writer, pl placement) error {
	o.duration = o.echoDur
	file := filepath.Join(moduleRoot(), "benchmark", "scenarios", "rooms.json")
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("scenario file: %w", err)
	}
	if _, err := os.Stat(o.ceiling); err != nil {
		fmt.Fprintf(stdout, "4. scenario file: skipped, no %s (make build)\n", o.ceiling)
		return nil
	}
	srv, addr, stop, err := startRefserver(o, pl)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintf(stdout, "\n4. Scenario file against echo: generator CPU per message received, refserver on cpu %s, generator on cpu %s, %s windows\n",
		orDash(pl.srv), orDash(pl.gen), o.duration)
	fmt.Fprintf(stdout, "   rooms: %d users of benchmark/scenarios/rooms.json (open loop, every message scanned); echo: then as many connections, batch 1, open loop at the rate rooms received\n", o.roomsUsers)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rep\tscenario\tmsg/s\tgen user ns/msg\tgen sys ns/msg\tgen cores\terrors\t")
	var echoNs, roomsNs, goroutinesNs []float64
	for rep := 0; rep < o.reps; rep++ {
		r, err := ceilingLoad(o, pl, srv, 1, "rooms", "--scenario", "script", "--scenario-file", file, "--url", "ws://"+addr,
			"--connections", fmt.Sprint(o.roomsUsers))
		if err != nil {
			return fmt.Errorf("rooms: %w", err)
		}
		g, err := ceilingLoad(o, pl, srv, 1, "rooms --io goroutines", "--scenario", "script", "--scenario-file", file, "--url", "ws://"+addr,
			"--connections", fmt.Sprint(o.roomsUsers), "--io", "goroutines")
		if err != nil {
			return fmt.Errorf("rooms --io goroutines: %w", err)
		}
		e, err := ceilingLoad(o, pl, srv, 1, "echo", "--scenario", "echo", "--url", "ws://"+addr+"/echo",
			"--connections", fmt.Sprint(o.roomsUsers), "--batch", "1", "--record-size", fmt.Sprint(o.size),
			"--rate", fmt.Sprintf("%.0f", r.ratePerS))
		if err != nil {
			return fmt.Errorf("echo: %w", err)
		}
		for _, p := range []echoPoint{r, g, e} {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%.2f\t%d\t\n", rep+1, p.generatorName, si(p.ratePerS),
				p.perMsg(p.gen.user), p.perMsg(p.gen.sys), (p.gen.user+p.gen.sys).Seconds()/p.sampledS, p.errors)
		}
		echoNs = append(echoNs, cpuPerMsg(e))
		roomsNs = append(roomsNs, cpuPerMsg(r))
		goroutinesNs = append(goroutinesNs, cpuPerMsg(g))
	}
	tw.Flush()
	fmt.Fprintln(stdout, "   the scanner's match-and-extract alone, per message: go test -bench Receive ./load/scenario/script")
	for i := range echoNs {
		if echoNs[i] > 0 {
			fmt.Fprintf(stdout, "   rep %d: a rooms message costs the generator %.2fx an echoed one (user+sys per message received)\n", i+1, roomsNs[i]/echoNs[i])
		}
		if goroutinesNs[i] > 0 {
			fmt.Fprintf(stdout, "   rep %d: rooms on the event loops costs %.2fx rooms on goroutines (user+sys per message received)\n", i+1, roomsNs[i]/goroutinesNs[i])
		}
	}
	return nil
}

// cpuPerMsg is the generator's user+system ns per message received.
func cpuPerMsg(p echoPoint) float64 {
	msgs := p.ratePerS * p.sampledS
	if msgs <= 0 {
		return 0
	}
	return float64((p.gen.user + p.gen.sys).Nanoseconds()) / msgs
}

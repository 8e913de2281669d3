package main

import (
	"fmt"
	"io"
	"time"
)

// ceilingMode is one way of running `ceiling load`'s closed echo loop.
type ceilingMode struct {
	io    string // --io
	eager bool   // --eager-reads
	base  string // -ceiling-base: run this binary instead of -ceiling
}

func (m ceilingMode) name() string {
	n := "ceiling load --io " + m.io
	if m.eager {
		n += " --eager-reads"
	}
	if m.base != "" {
		n = "base: " + n
	}
	return n
}

// ceilingModes are the modes measured at batch, goroutines and event loops
// side by side: eager reads only where a batch has more than one message
// (at batch 1 both read modes are the same).
//
// With -ceiling-base the modes are instead the event loops of the base
// build and of this one, alternately, twice (A-B-A-B): a before/after of a
// change to the generator, in one run beside the floor.
func ceilingModes(batch int, base string) []ceilingMode {
	if base != "" {
		a, b := ceilingMode{io: "loop", base: base}, ceilingMode{io: "loop"}
		return []ceilingMode{a, b, a, b}
	}
	ms := []ceilingMode{{io: "goroutines"}, {io: "loop"}}
	if batch > 1 {
		ms = append(ms, ceilingMode{io: "goroutines", eager: true}, ceilingMode{io: "loop", eager: true})
	}
	return ms
}

// abPoint is a section 3 point of `ceiling load` with its mode.
type abPoint struct {
	io    string
	eager bool
	base  bool // from -ceiling-base
	p     echoPoint
}

// writeBaseAB prints, per batch, this build's generator user and total CPU
// per message and msg/s as ratios to the -ceiling-base build's, each
// summed over its repetitions of the run.
func writeBaseAB(w io.Writer, ab []abPoint) {
	fmt.Fprintln(w, "   A/B, same run, alternately: this build / -ceiling-base (--io loop), CPU and messages summed over the repetitions")
	type sum struct{ user, total, msgs, secs float64 }
	sums := map[[2]int]*sum{}
	var batches []int
	for _, r := range ab {
		k := [2]int{r.p.batch, 0}
		if r.base {
			k[1] = 1
		}
		if sums[k] == nil {
			sums[k] = &sum{}
			if k[1] == 0 {
				batches = append(batches, r.p.batch)
			}
		}
		s := sums[k]
		s.user += float64(r.p.gen.user.Nanoseconds())
		s.total += float64((r.p.gen.user + r.p.gen.sys).Nanoseconds())
		s.msgs += r.p.ratePerS * r.p.sampledS
		s.secs += r.p.sampledS
	}
	for _, b := range batches {
		n, o := sums[[2]int{b, 0}], sums[[2]int{b, 1}]
		if o == nil || n.msgs <= 0 || o.msgs <= 0 {
			continue
		}
		user, _ := ratio(n.user/n.msgs, o.user/o.msgs)
		total, _ := ratio(n.total/n.msgs, o.total/o.msgs)
		tput, _ := ratio(n.msgs/n.secs, o.msgs/o.secs)
		fmt.Fprintf(w, "   batch %3d  user/msg %s  total/msg %s  msg/s %s\n", b, user, total, tput)
	}
}

// writeAB prints, per batch and read mode, the event loops' generator
// user and kernel CPU per message and msg/s as ratios to the goroutine
// loop's measured in the same run, then whether the loops meet the bar
// for being the default: less user CPU per message at batch 1 and 10 at
// equal or higher msg/s than the goroutines, without errors.
func writeAB(w io.Writer, ab []abPoint) {
	if len(ab) == 0 {
		return
	}
	if ab[0].base {
		writeBaseAB(w, ab)
		return
	}
	fmt.Fprintln(w, "   A/B, same run, --io loop / --io goroutines (same read mode): generator user and kernel CPU per message, msg/s")
	better := map[int]bool{}
	for _, r := range ab {
		if r.io != "loop" {
			continue
		}
		for _, g := range ab {
			if g.io != "goroutines" || g.p.batch != r.p.batch || g.eager != r.eager {
				continue
			}
			user, ok := ratio(perMsg(r.p, r.p.gen.user), perMsg(g.p, g.p.gen.user))
			sys, _ := ratio(perMsg(r.p, r.p.gen.sys), perMsg(g.p, g.p.gen.sys))
			tput, _ := ratio(r.p.ratePerS, g.p.ratePerS)
			mode := "wake per batch"
			if r.eager || r.p.batch == 1 {
				mode = "eager reads"
			}
			fmt.Fprintf(w, "   batch %3d, %-14s  user/msg %s  sys/msg %s  msg/s %s\n", r.p.batch, mode, user, sys, tput)
			if !r.eager {
				better[r.p.batch] = ok && perMsg(r.p, r.p.gen.user) < perMsg(g.p, g.p.gen.user) &&
					r.p.ratePerS >= g.p.ratePerS && r.p.errors == 0
			}
		}
	}
	verdict := "no: --io loop should not be the default"
	if better[1] && better[10] {
		verdict = "yes"
	}
	fmt.Fprintf(w, "   loop less user CPU per message at equal or higher msg/s than goroutines at batch 1 and 10: %s\n", verdict)
}

// perMsg is CPU time d per message in ns; 0 when no tick landed
// (unknown, not free).
func perMsg(p echoPoint, d time.Duration) float64 {
	msgs := p.ratePerS * p.sampledS
	if msgs <= 0 {
		return 0
	}
	return float64(d.Nanoseconds()) / msgs
}

func ratio(a, b float64) (string, bool) {
	if a <= 0 || b <= 0 {
		return "n/a (no CPU tick)", false
	}
	return fmt.Sprintf("%.2f", a/b), true
}

package harness

import (
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
)

// loadArgs are the `ceiling load` flags of one point of plan o (the
// GENERATOR contract). The connect strategy is pinned explicitly:
// bounded, 32 in flight, so the high rungs are not an auth storm.
func loadArgs(o *Plan, tg target.Spec, k result.PointKey, addr target.Addr, url string, window, warmup time.Duration, f pointFiles) []string {
	pt := o.Point
	a := []string{
		"--scenario", pt.Scenario,
		"--url", url,
		"--connections", strconv.Itoa(k.Connections),
		"--batch", strconv.Itoa(k.Batch),
		"--record-size", strconv.Itoa(pt.RecordSize),
		"--duration", window.String(),
		"--warmup", warmup.String(),
		"--connect-strategy", "bounded",
		"--connect-concurrency", strconv.Itoa(knob.ConnectConcurrency),
		"--measure-marker", f.marker,
		"--json", f.json,
		"--quiet",
	}
	if blk, err := tg.Block(pt.Scenario); err == nil {
		args := blk.Args()
		for i := 0; i < len(args); i++ {
			if _, multi := blk.(load.MultiURLBlock); multi && tg.URL != "" && args[i] == "--url" && i+1 < len(args) {
				i++ // the sweep's --url replaced the block's servers
				continue
			}
			a = append(a, target.Expand(args[i], addr))
		}
	}
	if s := pt.SourceAddrs; s != "" && s != load.SourceAuto {
		a = append(a, "--source-addrs", s)
	}
	if pt.IOPattern == load.IOEager {
		a = append(a, "--eager-reads")
	}
	a = append(a, connArgs(pt, o.Agents.Count)...)
	if pt.Drop {
		a = append(a, "--drop")
		// The target's own ready probe, when the generator can poll it
		// (a log: probe it cannot): how soon the server answers again.
		if r := target.Expand(tg.Ready, addr); strings.HasPrefix(r, "http://") || strings.HasPrefix(r, "https://") || strings.HasPrefix(r, "tcp:") {
			a = append(a, "--drop-probe", r)
		}
	}
	return a
}

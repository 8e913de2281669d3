package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/ceiling-bench/ceiling/harness/side"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/load"
)

// collect waits for the generator side to end by itself after its
// window, and reads its JSON (the collect stage). The side's end is
// judged after the servers: a server that exited during the point is
// the reason then (but the one a FAULT signalled).
func collect(ctx context.Context, gen *generation, set *serverSet, fs faultStage, out *verdict.Outcome) error {
	g := gen.side
	wait := g.Bounds().End
	select {
	case <-g.Done():
	case <-gen.clock.After(wait):
		why, tail := g.Why(side.StillRunning, wait, nil)
		return failAt(PhaseCollect, tail, "%s", why)
	case <-ctx.Done():
		return interruptedAt(PhaseCollect)
	}
	why, tail := g.Ended(out)
	if i, ok := set.exited(func(i int) bool { return fs.faulted(i) && fs.sent() }); ok {
		return failAt(PhaseCollect, set.procs[i], "%s exited during the point (%v)", set.label(i), set.procs[i].ExitErr())
	}
	if why != "" {
		return failAt(PhaseCollect, tail, "%s", why)
	}
	res, err := readLoad(gen.json)
	if err != nil {
		why, tail := g.Why(side.Result, 0, err)
		return failAt(PhaseCollect, tail, "%s", why)
	}
	out.Load = res
	return nil
}

// readLoad reads and checks the generator's JSON document.
func readLoad(path string) (*load.Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("no JSON written: %w", err)
	}
	var r load.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.SchemaVersion != load.SchemaVersion {
		return nil, fmt.Errorf("%s: schema_version %d, want %d", path, r.SchemaVersion, load.SchemaVersion)
	}
	return &r, nil
}

// refusal is the whole reason of a generator that stopped at its
// preflight on a refusal every point would meet (load.Refused), as its
// JSON at path says it, uncut; "" for any other failure, or without the
// file (agents report elsewhere).
func refusal(path, scenario string, set *serverSet) string {
	res, err := readLoad(path)
	if err != nil || !res.Summary.Refused {
		return ""
	}
	why := "the generator's preflight was refused, as it would be at every point: " + res.Summary.Failure
	if names := set.cluster(scenario).NameServers(res.Summary.Failure, set.addr); names != "" {
		why += " (" + names + ")"
	}
	return why
}

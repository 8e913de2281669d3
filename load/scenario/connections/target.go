package connections

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"

	"github.com/ceiling-bench/ceiling/load"
)

// Target is the scenario's block of a harness target file:
//
//	"connections": {"url": "ws://{addr}/echo"}
//	"connections": {"urls": ["ws://{addr}/echo", "ws://{host}:{port2}/echo"]}
//
// Each URL is an echo endpoint; with several (the servers of a target
// that lists them), connection i goes to URL i mod N, so a rung larger
// than one server's file-descriptor limit can be spread over several
// (docs/sweep.md). The block brings the scenario's connection ladder
// (DefaultLadder, QuickLadder) and its objective (DefaultObjective),
// which the sweep's CONNS_LADDER_1 and OBJECTIVE replace.
type Target struct {
	load.ServerURLs
}

func parseTarget(raw json.RawMessage) (load.TargetBlock, error) {
	var t Target
	if err := load.DecodeStrict(raw, &t); err != nil {
		return nil, err
	}
	return &t, errors.Join(t.Check()...)
}

// URL is the first echo endpoint; Args are a --url for each of the rest.
func (t *Target) URLField() string           { return t.URLFieldOf(Name) }
func (t *Target) Args() []string             { return t.MoreURLArgs() }
func (t *Target) Secrets() map[string]string { return nil }
func (t *Target) CheckLadder(int) error      { return nil }

// ConnsLadder is the scenario's own ladder (load.LadderBlock).
func (t *Target) ConnsLadder(quick bool) []int {
	if quick {
		return slices.Clone(QuickLadder)
	}
	return slices.Clone(DefaultLadder)
}

// Objective is the scenario's own (load.ObjectiveBlock).
func (t *Target) Objective() string { return DefaultObjective }

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

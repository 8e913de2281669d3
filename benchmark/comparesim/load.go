package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/ceiling-bench/ceiling/result"
)

// sequence is one compared (batch, connections) of one document: its
// usable blocks in run order, base[i] and head[i] the throughputs of
// block i's two repeats (run back to back).
type sequence struct {
	name         string // file and point, for the report
	file         string
	batch, conns int
	base, head   []float64
}

// loadSequences reads a two-arm document and returns one sequence per
// compared (batch, connections), ascending. A block is usable when both
// its repeats have status ok and a positive throughput: contended or
// otherwise unclean repeats are kept, since the drift they carry is what
// the resampling must preserve. Every error names the file.
func loadSequences(path string) ([]sequence, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err // *PathError names the file
	}
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: not a sweep document (result.Result JSON): %w", path, err)
	}
	if !slices.ContainsFunc(r.Curve, func(p result.Point) bool { return p.Arm != "" }) {
		return nil, fmt.Errorf("%s: not a two-arm document: no point of its curve has an arm (base or head); record one with ceiling sweep --base-target", path)
	}
	type key struct{ batch, conns int }
	byKey := map[key][]result.Point{}
	var keys []key
	for _, p := range r.Curve {
		if p.Role != result.RoleCompare {
			continue
		}
		k := key{p.Batch, p.Connections}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], p)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: a two-arm document without compare repeats (no point has role %q): nothing was compared", path, result.RoleCompare)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.batch, b.batch), cmp.Compare(a.conns, b.conns))
	})
	var out []sequence
	for _, k := range keys {
		s := sequence{
			name:  fmt.Sprintf("%s batch %d, %d conns", filepath.Base(path), k.batch, k.conns),
			file:  path,
			batch: k.batch, conns: k.conns,
		}
		for _, b := range result.Blocks(byKey[k]) { // in the order the blocks ran
			if usable(b.Base) && usable(b.Head) {
				s.base = append(s.base, b.Base.ThroughputPerS)
				s.head = append(s.head, b.Head.ThroughputPerS)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func usable(p *result.Point) bool {
	return p != nil && p.Status == result.StatusOK && p.ThroughputPerS > 0 && !math.IsInf(p.ThroughputPerS, 1)
}

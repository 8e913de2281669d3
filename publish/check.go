package publish

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/ceiling-bench/ceiling/publish/schema"
)

var knownVerdicts = []string{
	harness.VerdictServerSaturated, harness.VerdictGeneratorCapped,
	harness.VerdictBoth, harness.VerdictNeither, harness.VerdictFailed,
}

// Check holds the rules the JSON Schema cannot express: the fields must
// agree with each other. Read runs it after the schema; call it directly on
// a Result built in memory.
func Check(r *harness.Result) []schema.Problem {
	var ps []schema.Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, schema.Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if r.SchemaVersion != harness.SchemaVersion {
		add("schema_version", "unsupported version %d (this publisher reads %d)", r.SchemaVersion, harness.SchemaVersion)
	}
	if !validGenerator(r.Meta.Generator) {
		add("meta.generator", "%s is not a plain name (letters, digits, '.', '_', '-')", strconv.Quote(r.Meta.Generator))
	}
	if r.Meta.GitRef == "" {
		add("meta.git_ref", "empty")
	}
	ladder := r.Config.BatchLadder
	seen := map[int]bool{}
	for i, b := range ladder {
		if b <= 0 {
			add(fmt.Sprintf("config.batch_ladder[%d]", i), "%d is not a positive batch size", b)
		}
		if seen[b] {
			add(fmt.Sprintf("config.batch_ladder[%d]", i), "batch %d appears twice", b)
		}
		seen[b] = true
	}
	inLadder := func(b int) bool { return slices.Contains(ladder, b) }
	if !inLadder(r.Config.HeadlineBatch) {
		add("config.headline_batch", "%d is not in config.batch_ladder %v", r.Config.HeadlineBatch, ladder)
	}
	if r.NoiseFloorPct != nil && (math.IsNaN(*r.NoiseFloorPct) || *r.NoiseFloorPct < 0) {
		add("noise_floor_pct", "%v is not a percentage", *r.NoiseFloorPct)
	}

	h := r.Headline
	if h.Clean {
		if !inLadder(h.Batch) {
			add("headline.batch", "%d is not in config.batch_ladder %v", h.Batch, ladder)
		} else if h.Batch != r.Config.HeadlineBatch {
			add("headline.batch", "%d differs from config.headline_batch %d", h.Batch, r.Config.HeadlineBatch)
		}
		if h.ThroughputPerS <= 0 {
			add("headline.throughput_per_s", "a clean headline needs a positive throughput, got %v", h.ThroughputPerS)
		}
		if h.Connections <= 0 {
			add("headline.connections", "a clean headline needs a positive connection count, got %d", h.Connections)
		}
		if !slices.Contains(knownVerdicts, h.Verdict) || h.Verdict == harness.VerdictFailed {
			add("headline.verdict", "%s is not a verdict a clean headline can have", strconv.Quote(h.Verdict))
		}
		lowerBoundAgrees(add, "headline", h.Verdict, h.LowerBound)
	}

	for i, p := range r.Curve {
		at := func(f string) string { return fmt.Sprintf("curve[%d].%s", i, f) }
		if !inLadder(p.Batch) {
			add(at("batch"), "%d is not in config.batch_ladder %v", p.Batch, ladder)
		}
		if p.Clean && (p.Status != "ok" || p.Errors > 0) {
			add(at("clean"), "true, but status is %s with %d errors", strconv.Quote(p.Status), p.Errors)
		}
		if p.Clean && p.Saturated {
			add(at("clean"), "true, but the point is saturated")
		}
		if p.Status == "failed" && p.Verdict != harness.VerdictFailed {
			add(at("verdict"), "%s for a failed point (want %q)", strconv.Quote(p.Verdict), harness.VerdictFailed)
		}
		lowerBoundAgrees(add, fmt.Sprintf("curve[%d]", i), p.Verdict, p.LowerBound)
	}

	batches := map[int]int{}
	for i, c := range r.Ceilings {
		at := func(f string) string { return fmt.Sprintf("ceilings[%d].%s", i, f) }
		if !inLadder(c.Batch) {
			add(at("batch"), "%d is not in config.batch_ladder %v", c.Batch, ladder)
		}
		if j, dup := batches[c.Batch]; dup {
			add(at("batch"), "batch %d already has a ceiling at ceilings[%d]", c.Batch, j)
		}
		batches[c.Batch] = i
		if c.Found && !slices.Contains(knownVerdicts, c.Verdict) {
			add(at("verdict"), "%s is not a verdict", strconv.Quote(c.Verdict))
		}
		if c.Found && c.ThroughputPerS <= 0 {
			add(at("throughput_per_s"), "a found ceiling needs a positive throughput, got %v", c.ThroughputPerS)
		}
		if c.Found {
			lowerBoundAgrees(add, fmt.Sprintf("ceilings[%d]", i), c.Verdict, c.LowerBound)
		}
	}
	return ps
}

func validGenerator(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// lowerBoundAgrees checks that a figure's lower_bound says what its verdict
// means: the comment drops or adds the "at least" mark by this flag alone.
func lowerBoundAgrees(add func(path, format string, args ...any), at, verdict string, lowerBound bool) {
	if want := harness.IsLowerBound(verdict); lowerBound != want {
		add(at+".lower_bound", "%v, but the verdict %s means %v", lowerBound, strconv.Quote(verdict), want)
	}
}

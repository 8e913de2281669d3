package publish

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/ceiling-bench/ceiling/publish/schema"
	"github.com/ceiling-bench/ceiling/result"
)

var knownVerdicts = []string{
	result.VerdictServerSaturated, result.VerdictGeneratorCapped,
	result.VerdictBoth, result.VerdictNeither, result.VerdictFailed,
}

// Check holds the rules the JSON Schema cannot express: the fields must
// agree with each other. Read runs it after the schema; call it directly on
// a Result built in memory.
func Check(r *result.Result) []schema.Problem {
	var ps []schema.Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, schema.Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if r.SchemaVersion < result.OldestSchemaVersion || r.SchemaVersion > result.SchemaVersion {
		add("schema_version", "unsupported version %d (this publisher reads %d to %d)", r.SchemaVersion, result.OldestSchemaVersion, result.SchemaVersion)
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
		if !slices.Contains(knownVerdicts, h.Verdict) || h.Verdict == result.VerdictFailed {
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
		if p.Status == "failed" && p.Verdict != result.VerdictFailed {
			add(at("verdict"), "%s for a failed point (want %q)", strconv.Quote(p.Verdict), result.VerdictFailed)
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
	ps = append(ps, checkDerived(r)...)
	ps = append(ps, checkComparison(r)...)
	ps = append(ps, checkProfileDiff(r)...)
	return ps
}

// checkDerived recomputes what the sweep derives from its curve (the
// ceilings, the headline, the noise floor) and refuses a document whose
// figures do not follow from its own points: a published figure must be
// one that was measured, not one edited in.
func checkDerived(r *result.Result) []schema.Problem {
	data, err := json.Marshal(r)
	if err != nil {
		return []schema.Problem{{Path: "document", Msg: err.Error()}}
	}
	var again result.Result
	if err := json.Unmarshal(data, &again); err != nil {
		return []schema.Problem{{Path: "document", Msg: err.Error()}}
	}
	again.Summarize()
	var ps []schema.Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, schema.Problem{Path: path, Msg: fmt.Sprintf(format, args...) + " (derived from the curve's clean sweep points)"})
	}
	if h, w := r.Headline, again.Headline; h.Clean != w.Clean || h.ThroughputPerS != w.ThroughputPerS ||
		h.Connections != w.Connections || h.Verdict != w.Verdict || h.LowerBound != w.LowerBound {
		add("headline", "clean %v, %v msg/s at %d connections, %s; the curve gives clean %v, %v msg/s at %d connections, %s",
			h.Clean, h.ThroughputPerS, h.Connections, h.Verdict, w.Clean, w.ThroughputPerS, w.Connections, w.Verdict)
	}
	want := map[int]result.BatchCeiling{}
	for _, c := range again.Ceilings {
		want[c.Batch] = c
	}
	for i, c := range r.Ceilings {
		w, ok := want[c.Batch]
		if ok && (c.Found != w.Found || c.ThroughputPerS != w.ThroughputPerS || c.Connections != w.Connections || c.LowerBound != w.LowerBound) {
			add(fmt.Sprintf("ceilings[%d]", i), "found %v, %v msg/s at %d connections; the curve gives found %v, %v msg/s at %d connections",
				c.Found, c.ThroughputPerS, c.Connections, w.Found, w.ThroughputPerS, w.Connections)
		}
	}
	switch f, w := r.NoiseFloorPct, again.NoiseFloorPct; {
	case f == nil && w == nil:
	case f == nil || w == nil || *f != *w:
		add("noise_floor_pct", "%s; the A-A repeat gives %s", pctOrNull(f), pctOrNull(w))
	}
	return ps
}

func pctOrNull(v *float64) string {
	if v == nil {
		return "null"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
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
	if want := result.IsLowerBound(verdict); lowerBound != want {
		add(at+".lower_bound", "%v, but the verdict %s means %v", lowerBound, strconv.Quote(verdict), want)
	}
}

// checkComparison re-derives a two-arm document's comparison from its
// curve with the harness's own rule (result.ComparisonOf, at the
// document's config.compare_reps and config.alpha) and refuses a document
// whose comparison differs in any field: the verdict the comment shows and
// --fail-on gates on must be the one its samples give. A curve with arms
// and no comparison, or a comparison with no arms, is refused too.
func checkComparison(r *result.Result) []schema.Problem {
	want := result.ComparisonOf(r)
	got := r.Comparison
	switch {
	case got == nil && want == nil:
		return nil
	case got == nil:
		return []schema.Problem{{Path: "comparison", Msg: "missing, but the curve has points of two arms (a two-arm sweep)"}}
	case want == nil:
		return []schema.Problem{{Path: "comparison", Msg: "present, but no curve point has an arm (a single-arm sweep compares nothing)"}}
	}
	// The profile diff was measured on points of its own, not derived
	// from the compare repeats: it is checked apart (checkProfileDiff).
	want.Headline.ProfileDiff = got.Headline.ProfileDiff
	var ps []schema.Problem
	if r.Config.CompareReps < 1 {
		ps = append(ps, schema.Problem{Path: "config.compare_reps", Msg: fmt.Sprintf("%d, a two-arm sweep needs at least 1", r.Config.CompareReps)})
	}
	if !(r.Config.Alpha > 0 && r.Config.Alpha < 1) {
		ps = append(ps, schema.Problem{Path: "config.alpha", Msg: fmt.Sprintf("%v, want a level between 0 and 1", r.Config.Alpha)})
	}
	if len(ps) > 0 {
		return ps
	}
	var g, w any
	if err := roundTrip(got, &g); err != nil {
		return []schema.Problem{{Path: "comparison", Msg: err.Error()}}
	}
	if err := roundTrip(want, &w); err != nil {
		return []schema.Problem{{Path: "comparison", Msg: err.Error()}}
	}
	diffJSON("comparison", g, w, func(path string, g, w any) {
		if len(ps) < maxProblems {
			ps = append(ps, schema.Problem{Path: path, Msg: fmt.Sprintf("%s; the curve's compare repeats give %s (result.DecideComparison)", jsonText(g), jsonText(w))})
		}
	})
	return ps
}

func roundTrip(v any, into *any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}

// diffJSON reports every leaf where the decoded JSON values got and want
// differ, by field path (a missing key is reported as null).
func diffJSON(path string, got, want any, report func(path string, got, want any)) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			report(path, got, want)
			return
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			diffJSON(path+"."+k, g[k], w[k], report)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			if ok {
				report(path+".length", len(g), len(w))
			} else {
				report(path, got, want)
			}
			return
		}
		for i := range w {
			diffJSON(fmt.Sprintf("%s[%d]", path, i), g[i], w[i], report)
		}
	default:
		if got != want {
			report(path, got, want)
		}
	}
}

func jsonText(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if s := string(data); len(s) <= 80 {
		return s
	}
	return string(data[:77]) + "..."
}

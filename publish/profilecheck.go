package publish

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ceiling-bench/ceiling/publish/schema"
	"github.com/ceiling-bench/ceiling/result"
)

// checkProfileDiff holds comparison.headline.profile_diff to what the
// harness writes: its files are relative paths inside the result's
// directory (the site reads them from there: never an absolute path or
// one that climbs out), its frames' verdicts are the rule's words and
// their figures finite.
func checkProfileDiff(r *result.Result) []schema.Problem {
	if r.Comparison == nil || r.Comparison.Headline.ProfileDiff == nil {
		return nil
	}
	d := r.Comparison.Headline.ProfileDiff
	const at = "comparison.headline.profile_diff"
	var ps []schema.Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, schema.Problem{Path: at + path, Msg: fmt.Sprintf(format, args...)})
	}
	files := map[string]string{".flamegraph_file": d.FlamegraphFile}
	if d.Base != nil {
		files[".base.folded_file"] = d.Base.FoldedFile
	}
	if d.Head != nil {
		files[".head.folded_file"] = d.Head.FoldedFile
	}
	for path, f := range files {
		if f != "" && !LocalFile(f) {
			add(path, "%q is not a relative path inside the result's directory", f)
		}
	}
	verdicts := []string{result.FrameGrew, result.FrameShrank, result.FrameWithinNoise, result.FrameUntested}
	for i, f := range d.Frames {
		if !slices.Contains(verdicts, f.Verdict) {
			add(fmt.Sprintf(".frames[%d].verdict", i), "%q is not one of %v", f.Verdict, verdicts)
		}
		for _, v := range []float64{f.BaseNs, f.HeadNs, f.ChangeNs, f.BaseSelfNs, f.HeadSelfNs, f.Z, f.DetectableNs} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				add(fmt.Sprintf(".frames[%d]", i), "a figure is not finite")
				break
			}
		}
	}
	return ps
}

// LocalFile: p is a relative path that stays inside its directory.
func LocalFile(p string) bool {
	return p != "" && !filepath.IsAbs(p) && filepath.IsLocal(p) && !strings.ContainsRune(p, '\\')
}

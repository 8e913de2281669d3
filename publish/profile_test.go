package publish

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
)

// withProfile is the slower two-arm document with a profile diff whose
// function names are hostile: markup, a table's pipe, a backtick, a
// mention, a link.
func withProfile(t *testing.T, d *result.ProfileDiff) *result.Result {
	t.Helper()
	r := twoArmSlower(t)
	r.Comparison.Headline.ProfileDiff = d
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(data, "profiled.json")
	if err != nil {
		t.Fatalf("a document with a profile diff does not read back: %v", err)
	}
	return back
}

func profileDiff() *result.ProfileDiff {
	pct := 12.5
	d := &result.ProfileDiff{Tool: "perf", Unit: "cpu_ns_per_message", Alpha: 0.05, ZCritical: 3.9, Tested: 300,
		Base:           &result.ProfileArm{Points: []int{20, 23, 24}, Samples: 3000, Unsymbolised: 12, Messages: 2e5, CPUNsPerMessage: 10765, NsPerSample: 1e6, FoldedFile: "profile/base.folded"},
		Head:           &result.ProfileArm{Points: []int{21, 22, 25}, Samples: 3100, Messages: 1.8e5, CPUNsPerMessage: 13226, NsPerSample: 1e6, FoldedFile: "profile/head.folded"},
		FlamegraphFile: "profile/flamegraph.svg"}
	names := []string{"main.spin", `<script>alert(1)</script>`, "a|b`c", "@octocat #1", "[x](https://evil.example)", "f6", "f7"}
	for i, n := range names {
		d.Frames = append(d.Frames, result.ProfileFrame{Function: n, BaseNs: 0, HeadNs: float64(2000 - 100*i), ChangeNs: float64(2000 - 100*i), Verdict: result.FrameGrew})
	}
	d.Frames = append(d.Frames, result.ProfileFrame{Function: "runtime.mallocgc", BaseNs: 800, HeadNs: 700, ChangeNs: -100, ChangePct: &pct, Verdict: result.FrameShrank},
		result.ProfileFrame{Function: "quiet", BaseNs: 100, HeadNs: 101, ChangeNs: 1, Verdict: result.FrameWithinNoise})
	return d
}

// TestCommentProfileSection: the comment folds the profile away, lists
// the 5 frames that grew most and those that shrank, escapes every
// function name, and names the flame graph; frames within their noise
// are not listed.
func TestCommentProfileSection(t *testing.T) {
	c, err := Compare(nil, withProfile(t, profileDiff()), CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	md := Render(c, RenderOptions{})
	i := strings.Index(md, "<details><summary>Why: CPU per message, head against base (perf, 3 profiled points an arm)</summary>")
	if i < 0 {
		t.Fatalf("no profile section:\n%s", md)
	}
	sec := md[i : i+strings.Index(md[i:], "</details>")]
	for _, want := range []string{
		"Grew most:", "| main\\.spin | 0" + nbsp + "ns | 2.00" + nbsp + "µs |", "&lt;script&gt;alert\\(1\\)&lt;/script&gt;",
		"a\\|b\\`c", "@" + wordJoiner + "octocat #" + wordJoiner + "1", "\\[x\\]\\(https&#58;//evil\\.example\\)",
		"Shrank most:", "| runtime\\.mallocgc | 800" + nbsp + "ns | 700" + nbsp + "ns | -100" + nbsp + "ns (-12.5%) |",
		"`profile/flamegraph.svg`", "Samples without a symbol: base 12 of 3000, head 0 of 3100.",
		"Whole servers: base 10.77" + nbsp + "µs, head 13.23" + nbsp + "µs",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("the section lacks %q:\n%s", want, sec)
		}
	}
	for _, not := range []string{"f6", "f7", "quiet", "<script>"} {
		if strings.Contains(sec, not) {
			t.Errorf("the section holds %q:\n%s", not, sec)
		}
	}
}

// TestCommentSaysWhyNoProfile: a run without perf says in the comment
// that no profile was taken and why.
func TestCommentSaysWhyNoProfile(t *testing.T) {
	d := &result.ProfileDiff{Reason: "no profile of the base arm: point 20 (base): no profile: perf is not installed (not on PATH)"}
	c, err := Compare(nil, withProfile(t, d), CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	md := Render(c, RenderOptions{})
	want := "<details><summary>CPU profile: none was taken</summary>\n\nNo differential profile: no profile of the base arm&#58; point 20 \\(base\\)&#58; no profile&#58; perf is not installed \\(not on PATH\\)."
	if !strings.Contains(md, want) {
		t.Errorf("the comment lacks %q:\n%s", want, md)
	}
}

// TestCheckProfileDiffFiles: a profile diff naming a file outside the
// result's directory, or a verdict the rule has not, is refused.
func TestCheckProfileDiffFiles(t *testing.T) {
	for _, bad := range []string{"/etc/passwd", "../../secret", "profile/../../x"} {
		d := profileDiff()
		d.FlamegraphFile = bad
		r := twoArmSlower(t)
		r.Comparison.Headline.ProfileDiff = d
		if ps := Check(r); !strings.Contains(fmt.Sprint(ps), "flamegraph_file") {
			t.Errorf("%q taken: %v", bad, ps)
		}
	}
	d := profileDiff()
	d.Frames[0].Verdict = "bigger"
	r := twoArmSlower(t)
	r.Comparison.Headline.ProfileDiff = d
	if ps := Check(r); !strings.Contains(fmt.Sprint(ps), "frames[0].verdict") {
		t.Errorf("verdict taken: %v", ps)
	}
}

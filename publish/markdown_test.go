package publish

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.md from the current output")

func mustRead(t *testing.T, name string) *harness.Result {
	t.Helper()
	r, err := Read(readFixture(t, name), name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// golden compares got with testdata/<name>.golden.md, or rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden.md")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./publish -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got), refresh with -update if intended:\n%s", path, diff)
	}
}

func TestRenderGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		base, head string // base "" = missing
		opts       CompareOptions
	}{
		{"same", "base.json", "head_same.json", CompareOptions{MergeBase: "1111111111111111111111111111111111111111", BaseSource: "benchmark/published/ceiling-load.json on main"}},
		{"mixed", "base.json", "head_mixed.json", CompareOptions{}},
		{"capped", "base.json", "head_capped.json", CompareOptions{}},
		{"nofloor", "base.json", "head_nofloor.json", CompareOptions{}},
		{"fallback", "base.json", "head_same.json", CompareOptions{MergeBase: "9999999999999999999999999999999999999999"}},
		{"head_only", "", "head_same.json", CompareOptions{BaseMissing: "main has no published result for ceiling-load yet"}},
		{"hostile", "base.json", "head_hostile.json", CompareOptions{}},
		{"no_headline", "base.json", "no_headline.json", CompareOptions{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var base *harness.Result
			if tt.base != "" {
				base = mustRead(t, tt.base)
			}
			golden(t, tt.name, Render(Compare(base, mustRead(t, tt.head), tt.opts), RenderOptions{}))
		})
	}
}

func TestCompareVerdicts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, base, head string
		want             map[int]string // batch -> verdict
		headline         string
	}{
		{"inside floor", "base.json", "head_same.json", map[int]string{10: Same, 100: Same}, Same},
		{"beyond floor", "base.json", "head_mixed.json", map[int]string{10: Slower, 100: Faster}, Slower},
		{"lower bound", "base.json", "head_capped.json", map[int]string{10: Faster, 100: CannotConclude}, Faster},
		{"no floor", "base.json", "head_nofloor.json", map[int]string{10: CannotConclude, 100: CannotConclude}, CannotConclude},
		{"no clean headline, no floor", "base.json", "no_headline.json", map[int]string{10: CannotConclude, 100: CannotConclude}, CannotConclude},
	}
	for _, tt := range tests {
		c := Compare(mustRead(t, tt.base), mustRead(t, tt.head), CompareOptions{})
		got := map[int]string{}
		for _, r := range c.Rows {
			got[r.Batch] = r.Verdict
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: verdicts by batch (-want +got):\n%s", tt.name, diff)
		}
		if c.Headline.Verdict != tt.headline {
			t.Errorf("%s: headline verdict = %q, want %q", tt.name, c.Headline.Verdict, tt.headline)
		}
	}
}

// TestNeverRegressionInsideFloor sweeps deltas around the floor: a change
// whose size is at most the floor is never "slower".
func TestNeverRegressionInsideFloor(t *testing.T) {
	t.Parallel()
	base := mustRead(t, "base.json") // floor 4 %
	for _, d := range []float64{-4, -3.99, -1, 0, 1, 4, -4.01, 4.01} {
		head := mustRead(t, "head_same.json")
		head.Ceilings[0].ThroughputPerS = base.Ceilings[0].ThroughputPerS * (1 + d/100)
		got := Compare(base, head, CompareOptions{}).Rows[0].Verdict
		want := Same
		if d < -4.001 {
			want = Slower
		} else if d > 4.001 {
			want = Faster
		}
		if got != want {
			t.Errorf("delta %+.2f%% with a 4%% floor: %q, want %q", d, got, want)
		}
	}
}

func TestHostileStaysContained(t *testing.T) {
	t.Parallel()
	md := Render(Compare(mustRead(t, "base.json"), mustRead(t, "head_hostile.json"), CompareOptions{}), RenderOptions{})
	for _, bad := range []string{"<script", "</details><details open>", "](https://", "@octocat", "\nline two", "</td>"} {
		if strings.Contains(md, bad) {
			t.Errorf("rendered Markdown contains %q unescaped", bad)
		}
	}
	if n := strings.Count(md, "<!-- ceiling:comment"); n != 1 {
		t.Errorf("%d hidden markers, want exactly 1 (a warning must not forge one)", n)
	}
	if o, c := strings.Count(md, "<details>"), strings.Count(md, "</details>"); o != c {
		t.Errorf("<details> opened %d times, closed %d times", o, c)
	}
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != strings.Count(firstTableRowAbove(md, i), "|") {
			t.Errorf("line %d: table row with a different cell count: %q", i+1, line)
		}
	}
}

// firstTableRowAbove returns the header row of the table that holds line i.
func firstTableRowAbove(md string, i int) string {
	lines := strings.Split(md, "\n")
	for j := i; j > 0; j-- {
		if !strings.HasPrefix(lines[j-1], "|") {
			return lines[j]
		}
	}
	return lines[0]
}

func TestRenderCommentFitsLimit(t *testing.T) {
	t.Parallel()
	head := mustRead(t, "head_same.json")
	for len(head.Curve) < 2000 {
		head.Curve = append(head.Curve, head.Curve...)
	}
	c := Compare(mustRead(t, "base.json"), head, CompareOptions{})
	if full := Render(c, RenderOptions{}); len(full) <= MaxCommentLen {
		t.Fatalf("test document too small: %d", len(full))
	}
	md := RenderComment(c, RenderOptions{})
	if len([]rune(md)) > MaxCommentLen || !strings.Contains(md, "did not fit in a comment") {
		t.Errorf("comment of %d characters; want at most %d with the points left out", len(md), MaxCommentLen)
	}
}

func TestCheckMarker(t *testing.T) {
	t.Parallel()
	for m, ok := range map[string]bool{
		Marker("ceiling-load"): true, "x": true, "a --> b": false, "a -- b": false, "": false, "a<b": false,
	} {
		if err := CheckMarker(m); (err == nil) != ok {
			t.Errorf("CheckMarker(%q) = %v, want ok=%v", m, err, ok)
		}
	}
}

func TestComparePartialAlert(t *testing.T) {
	t.Parallel()
	head := mustRead(t, "head_same.json")
	head.Partial, head.PartialReason = true, "SIGTERM"
	md := Render(Compare(mustRead(t, "base.json"), head, CompareOptions{}), RenderOptions{})
	want := "> [!WARNING]\n> head run: the sweep was interrupted; only the 7 points that finished are here.\n"
	if !strings.Contains(md, want) {
		t.Errorf("no partial alert in:\n%.600s", md)
	}
}

func TestFailedPointShowsNoFigure(t *testing.T) {
	t.Parallel()
	head := mustRead(t, "head_same.json")
	fp := &head.Curve[1]
	*fp = harness.Point{Index: fp.Index, Role: fp.Role, Batch: fp.Batch, Connections: fp.Connections,
		Status: harness.StatusFailed, Verdict: harness.VerdictFailed, FailReason: "server exited"}
	md := Render(Compare(nil, head, CompareOptions{}), RenderOptions{})
	want := fmt.Sprintf("| %d | sweep | %d | %d | 0 | failed | n/a | n/a | 0 |", fp.Index, fp.Batch, fp.Connections)
	if !strings.Contains(md, want) {
		t.Errorf("no row %q for the failed point in:\n%s", want, md)
	}
}

// The chart's lines cannot carry †: a lower-bound point on them is named
// under the chart.
func TestChartNamesLowerBounds(t *testing.T) {
	t.Parallel()
	head := mustRead(t, "head_same.json")
	var conns []int
	for i, p := range head.Curve {
		if p.Role == harness.RoleSweep && p.Batch == head.Config.HeadlineBatch && p.Clean && len(conns) == 0 {
			head.Curve[i].Verdict, head.Curve[i].LowerBound = harness.VerdictGeneratorCapped, true
			conns = append(conns, p.Connections)
		}
	}
	if len(conns) == 0 {
		t.Fatal("fixture has no clean point at the headline batch")
	}
	md := Render(Compare(mustRead(t, "base.json"), head, CompareOptions{}), RenderOptions{})
	want := fmt.Sprintf("Generator-capped, so lower bounds: head at %d connections.", conns[0])
	if !strings.Contains(md, want) {
		t.Errorf("no %q under the chart:\n%s", want, md)
	}
	if md := Render(Compare(mustRead(t, "base.json"), mustRead(t, "head_same.json"), CompareOptions{}), RenderOptions{}); strings.Contains(md, "Generator-capped, so") {
		t.Error("a chart without lower bounds names some")
	}
}

func TestUncleanPointsAlert(t *testing.T) {
	t.Parallel()
	head := mustRead(t, "head_same.json")
	head.Curve[1].Clean = false // no errors, but say a connection was lost
	md := Render(Compare(mustRead(t, "base.json"), head, CompareOptions{}), RenderOptions{})
	want := "> head run: 1 more points had no errors but were not clean"
	if !strings.Contains(md, want) {
		t.Errorf("no alert %q in:\n%.800s", want, md)
	}
}

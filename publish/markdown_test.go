package publish

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.md from the current output")

func mustRead(t *testing.T, name string) *result.Result {
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

// renderCase is one comment of the golden tests (and of the mermaid
// render test, which draws every chart in them).
type renderCase struct {
	name string
	md   string
}

func renderCases(t *testing.T) []renderCase {
	t.Helper()
	var out []renderCase
	cross := []struct {
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
		{"resilience_real", "", "resilience_real.json", CompareOptions{Alone: true}},
	}
	for _, tt := range cross {
		var base *result.Result
		if tt.base != "" {
			base = mustRead(t, tt.base)
		}
		out = append(out, renderCase{tt.name, Render(mustCompare(t, base, mustRead(t, tt.head), tt.opts), RenderOptions{})})
	}
	for _, tt := range []struct {
		name string
		head *result.Result
		opts CompareOptions
	}{
		{"two_arm_slower", twoArmSlower(t), CompareOptions{}},
		{"two_arm_same", twoArmSame(t), CompareOptions{BaseGiven: true}},
		{"two_arm_bounds", twoArmBounds(t), CompareOptions{}},
		// The server's memory per connection on every repeat, 4096 B a
		// connection more on the head (refserver --conn-ballast 4096).
		{"two_arm_memory", twoArmMemory(t, 4096), CompareOptions{}},
		// Written by a real `QUICK=1 ceiling sweep --base-target
		// benchmark/targets/refserver.json --target T` where T adds
		// --spin 2us, on a 2-core machine shared with other jobs: both arms
		// generator-capped at batch 10, so it cannot conclude.
		{"two_arm_real", mustRead(t, "two_arm_real.json"), CompareOptions{}},
		// Written by a real `make ceiling SCENARIO=rooms` on a 2-core
		// machine: 200, 1000 and 3000 users, the objective of
		// benchmark/scenarios/rooms.json met up to 1000.
		{"rooms_real", mustRead(t, "rooms_real.json"), CompareOptions{BaseMissing: "main has no published result for rooms yet"}},
	} {
		out = append(out, renderCase{tt.name, Render(mustCompare(t, nil, tt.head, tt.opts), RenderOptions{})})
	}
	return out
}

func mustCompare(t *testing.T, base, head *result.Result, opts CompareOptions) *Comparison {
	t.Helper()
	c, err := Compare(base, head, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRenderGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range renderCases(t) {
		golden(t, tc.name, tc.md)
	}
}

// titleAndVerdict are the comment's outcome title (a line, or an alert
// block's two lines) right after the hidden marker, and the verdict line
// under it.
func titleAndVerdict(md string) (title, verdict string) {
	lines := strings.Split(md, "\n")
	i := 1
	title = lines[i]
	if strings.HasPrefix(title, "> [!") {
		i++
		title += "\n" + lines[i]
	}
	for i++; i < len(lines) && lines[i] == ""; i++ {
	}
	if i < len(lines) {
		verdict = lines[i]
	}
	return title, verdict
}

// The first thing a reviewer sees (after the hidden marker) is the
// outcome, named after the server: a regression as a CAUTION block, no
// change with what could have been detected; then the verdict in words,
// with its figures, where p99 is information, never bold.
func TestOutcomeThenVerdict(t *testing.T) {
	t.Parallel()
	type want struct{ title, verdict *regexp.Regexp }
	cases := map[string]want{
		"two_arm_slower": {
			regexp.MustCompile(`^> \[!CAUTION\]\n> \*\*❌ refserver \\\(head\\\): 12\.\d.% slower at batch 10\*\* \(p.=.0\.008\)$`),
			regexp.MustCompile(`^\*\*ceiling\\-load\*\*: headline \*\*slower\*\*, −12\.\d.% \(95.% CI −\d+\.\d.….−\d+\.\d.%, p.=.0\.008, 8.pairs\); could have detected ±\d+\.\d.%; 1 of 2 batch sizes slower, 1 within noise; p99 worse \+\d+\.\d.% \(p.=.0\.008, information: does not gate\)\.$`)},
		"two_arm_same": {
			regexp.MustCompile(`^\*\*➖ refserver \\\(head\\\): within noise at batch 10\*\* \(could have detected ±\d+\.\d.%\)$`),
			regexp.MustCompile(`^\*\*ceiling\\-load\*\*: headline within noise, [+−±]\d\.\d.% \(.*\); could have detected ±\d+\.\d.%; 2 of 2 batch sizes within noise\.$`)},
		"mixed": {
			regexp.MustCompile(`^> \[!WARNING\]\n> \*\*\S+ refserver: cannot conclude at batch \d+\*\*$`),
			regexp.MustCompile(`^\*\*ceiling\\-load\*\* \(cross-run fallback\): headline −20\.0.% against a result published by another run: \*cannot conclude\*; 2 of 2 batch sizes cannot conclude\.$`)},
		"head_only": {
			regexp.MustCompile(`^\*\*➖ [^*]+: nothing compared\*\* \(no baseline\)$`),
			regexp.MustCompile(`^\*\*ceiling\\-load\*\*: head only, nothing compared \(no baseline\); headline `)},
	}
	for _, tc := range renderCases(t) {
		w, ok := cases[tc.name]
		if !ok {
			continue
		}
		title, verdict := titleAndVerdict(tc.md)
		if !strings.HasPrefix(tc.md, "<!-- ceiling:comment") || !w.title.MatchString(title) || !w.verdict.MatchString(verdict) {
			t.Errorf("%s: title\n%s\nverdict\n%s\nwant %s, then %s", tc.name, title, verdict, w.title, w.verdict)
		}
		if strings.Contains(tc.md, "p99 **") || strings.Contains(tc.md, "**worse**") || strings.Contains(tc.md, "**better**") {
			t.Errorf("%s: a p99 verdict in bold", tc.name)
		}
	}
}

// Alerts come right after the verdict line, before any table.
func TestAlertsAtTop(t *testing.T) {
	t.Parallel()
	for _, tc := range renderCases(t) {
		alert, table := strings.Index(tc.md, "> [!"), strings.Index(tc.md, "\n| ")
		if alert >= 0 && alert > table {
			t.Errorf("%s: an alert below the first table", tc.name)
		}
	}
	md := Render(mustCompare(t, mustRead(t, "base.json"), mustRead(t, "head_same.json"), CompareOptions{}), RenderOptions{})
	if !strings.Contains(md, "> [!CAUTION]\n> Different machines / runs: runner variance not in the estimate.") {
		t.Errorf("a cross-run comparison without the caution at the top:\n%.600s", md)
	}
	md = Render(mustCompare(t, nil, twoArmBounds(t), CompareOptions{}), RenderOptions{})
	for _, want := range []string{
		"> - Too few samples at batch 10, 64 connections: n = 8 + 6 of the 8 per arm asked for (2 repeats failed or were not clean).",
		"> - Lower bound at batch 10, 64 connections: base generator-capped",
		"> - Lower bound at batch 100, 16 connections: head generator-capped (the generator ran out of CPU first), so its verdict rests on a lower bound",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no alert %q in:\n%.1500s", want, md)
		}
	}
}

// No figure with a unit can wrap: the space before "%" and inside "n = 5 +
// 5" is non-breaking.
func TestFiguresDoNotWrap(t *testing.T) {
	t.Parallel()
	bad := regexp.MustCompile(`\d %|… | …|p = \d|n = \d|\d \+ \d|msg/s @ \d`)
	for _, tc := range renderCases(t) {
		for i, line := range strings.Split(tc.md, "\n") {
			if i != 1 && !strings.HasPrefix(line, "|") {
				continue // the verdict line and the tables
			}
			if m := bad.FindString(line); m != "" {
				t.Errorf("%s line %d: breakable figure %q in %q", tc.name, i+1, m, line)
			}
		}
	}
}

func TestCompareVerdicts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, base, head string
		want             map[int]string // batch -> verdict
		headline         string
	}{
		{"inside floor", "base.json", "head_same.json", map[int]string{10: WithinNoise, 100: WithinNoise}, WithinNoise},
		{"beyond floor", "base.json", "head_mixed.json", map[int]string{10: CannotConclude, 100: CannotConclude}, CannotConclude},
		{"lower bound", "base.json", "head_capped.json", map[int]string{10: CannotConclude, 100: CannotConclude}, CannotConclude},
		{"no floor", "base.json", "head_nofloor.json", map[int]string{10: CannotConclude, 100: CannotConclude}, CannotConclude},
		{"no clean headline, no floor", "base.json", "no_headline.json", map[int]string{10: CannotConclude, 100: CannotConclude}, CannotConclude},
	}
	for _, tt := range tests {
		c := mustCompare(t, mustRead(t, tt.base), mustRead(t, tt.head), CompareOptions{})
		if c.Mode != ModeCrossRun {
			t.Errorf("%s: mode %s, want %s", tt.name, c.Mode, ModeCrossRun)
		}
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

// TestCrossRunNeverCallsAChange sweeps deltas around the floor: a
// cross-run comparison (one A-A figure per run, runner variance not in
// it) is within noise inside the floor and cannot conclude beyond it,
// never faster or slower, however large the change.
func TestCrossRunNeverCallsAChange(t *testing.T) {
	t.Parallel()
	base := mustRead(t, "base.json") // floor 4 %
	for _, d := range []float64{-60, -4.01, -4, -3.99, -1, 0, 1, 4, 4.01, 60} {
		head := mustRead(t, "head_same.json")
		head.Ceilings[0].ThroughputPerS = base.Ceilings[0].ThroughputPerS * (1 + d/100)
		c := mustCompare(t, base, head, CompareOptions{})
		got := c.Rows[0].Verdict
		want := WithinNoise
		if d < -4.001 || d > 4.001 {
			want = CannotConclude
		}
		if got != want {
			t.Errorf("delta %+.2f%% with a 4%% floor: %q, want %q", d, got, want)
		}
		if err := FailOn(c, FailOnSlower); err != nil {
			t.Errorf("delta %+.2f%%: --fail-on slower failed a cross-run comparison: %v", d, err)
		}
	}
}

func TestTwoArmVerdicts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		head     *result.Result
		want     map[int]string
		headline string
		atLeast  map[int]bool
	}{
		{"slower", twoArmSlower(t), map[int]string{10: Slower, 100: WithinNoise}, Slower, nil},
		{"same", twoArmSame(t), map[int]string{10: WithinNoise, 100: WithinNoise}, WithinNoise, nil},
		{"bounds", twoArmBounds(t), map[int]string{10: CannotConclude, 100: Faster}, CannotConclude, map[int]bool{100: true}},
	} {
		c := mustCompare(t, mustRead(t, "base.json"), tt.head, CompareOptions{})
		if c.Mode != ModeTwoArm || c.Base != nil {
			t.Errorf("%s: mode %s with base %v; want two-arm, the --base unused", tt.name, c.Mode, c.Base != nil)
		}
		got, atLeast := map[int]string{}, map[int]bool{}
		for _, r := range c.Rows {
			got[r.Batch] = r.Verdict
			if r.AtLeast {
				atLeast[r.Batch] = true
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: verdicts by batch (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(tt.atLeast, atLeast, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: at-least rows (-want +got):\n%s", tt.name, diff)
		}
		if c.Headline.Verdict != tt.headline {
			t.Errorf("%s: headline %q, want %q", tt.name, c.Headline.Verdict, tt.headline)
		}
	}
}

func TestHostileStaysContained(t *testing.T) {
	t.Parallel()
	hostile := mustRead(t, "head_hostile.json")
	assertContained(t, "cross-run", Render(mustCompare(t, mustRead(t, "base.json"), hostile, CompareOptions{
		MergeBase: "</details> @octocat", BaseSource: "[x](https://evil.example) <script>",
	}), RenderOptions{}))

	// A two-arm document: its target names, regime, warnings and the
	// reasons of its failed repeats come from the run too.
	r := twoArmBounds(t)
	r.Meta.BaseTarget.Name, r.Meta.Target.Name = hostile.Regime, hostile.Meta.Runner.Name
	r.Regime, r.Warnings = hostile.Regime, hostile.Warnings
	for i := range r.Curve {
		if r.Curve[i].Status == result.StatusFailed {
			r.Curve[i].FailReason = hostile.Warnings[0]
		}
	}
	// The reasons carry the failed repeats' words: derived again.
	r.Comparison = result.DecideComparison(r.Curve, r.Config)
	assertContained(t, "two-arm", Render(mustCompare(t, nil, r, CompareOptions{}), RenderOptions{}))
}

func assertContained(t *testing.T, name, md string) {
	t.Helper()
	if !strings.Contains(md, "evil") || !strings.Contains(md, "octocat") {
		t.Fatalf("%s: the hostile strings are not in the comment at all; the test tests nothing", name)
	}
	for _, bad := range []string{"<script", "</details><details open>", "](https://", "@octocat", "\nline two", "</td>"} {
		if strings.Contains(md, bad) {
			t.Errorf("%s: rendered Markdown contains %q unescaped", name, bad)
		}
	}
	if n := strings.Count(md, "<!-- ceiling:comment"); n != 1 {
		t.Errorf("%s: %d hidden markers, want exactly 1 (a warning must not forge one)", name, n)
	}
	if o, c := strings.Count(md, "<details>"), strings.Count(md, "</details>"); o != c {
		t.Errorf("%s: <details> opened %d times, closed %d times", name, o, c)
	}
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != strings.Count(firstTableRowAbove(md, i), "|") {
			t.Errorf("%s line %d: table row with a different cell count: %q", name, i+1, line)
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
	c := mustCompare(t, mustRead(t, "base.json"), head, CompareOptions{})
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
	md := Render(mustCompare(t, mustRead(t, "base.json"), head, CompareOptions{}), RenderOptions{})
	want := "> [!WARNING]\n> head run: the sweep was interrupted; only the 7 points that finished are here.\n"
	if !strings.Contains(md, want) || strings.Index(md, want) > strings.Index(md, "\n| ") {
		t.Errorf("no partial alert in:\n%.600s", md)
	}
}

func TestFailedPointShowsNoFigure(t *testing.T) {
	t.Parallel()
	head := mustRead(t, "head_same.json")
	fp := &head.Curve[1]
	*fp = result.Point{Index: fp.Index, Role: fp.Role, Batch: fp.Batch, Connections: fp.Connections,
		Status: result.StatusFailed, Verdict: result.VerdictFailed, FailReason: "server exited"}
	md := Render(mustCompare(t, nil, head, CompareOptions{}), RenderOptions{})
	want := fmt.Sprintf("| %d | sweep | %d | %d | n/a | n/a | n/a\u00a0·\u00a0n/a | **failed** |", fp.Index, fp.Batch, fp.Connections)
	if !strings.Contains(md, want) || !strings.Contains(md, fmt.Sprintf("- #%d: server exited", fp.Index)) {
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
		if p.Role == result.RoleSweep && p.Batch == head.Config.HeadlineBatch && p.Clean && len(conns) == 0 {
			head.Curve[i].Verdict, head.Curve[i].LowerBound = result.VerdictGeneratorCapped, true
			conns = append(conns, p.Connections)
		}
	}
	if len(conns) == 0 {
		t.Fatal("fixture has no clean point at the headline batch")
	}
	md := Render(mustCompare(t, mustRead(t, "base.json"), head, CompareOptions{}), RenderOptions{})
	want := fmt.Sprintf("Generator-capped, so lower bounds (the shaded bars): head at %d connections.", conns[0])
	if !strings.Contains(md, want) || !strings.Contains(md, `    bar "head lower bound" [`) {
		t.Errorf("no %q and no bar series in the chart:\n%s", want, md)
	}
	if md := Render(mustCompare(t, mustRead(t, "base.json"), mustRead(t, "head_same.json"), CompareOptions{}), RenderOptions{}); strings.Contains(md, "Generator-capped, so") || strings.Contains(md, "bar \"") {
		t.Error("a chart without lower bounds names some")
	}
}

func TestUncleanPointsAlert(t *testing.T) {
	t.Parallel()
	head := mustRead(t, "head_same.json")
	head.Curve[1].Clean = false // no errors, but say a connection was lost
	md := Render(mustCompare(t, mustRead(t, "base.json"), head, CompareOptions{}), RenderOptions{})
	want := "> head run: 1 more points had no errors but were not clean"
	if !strings.Contains(md, want) {
		t.Errorf("no alert %q in:\n%.800s", want, md)
	}
}

// A contended point is named as one, with what contended it, in the
// comment's warnings (issue 22: it read "saturated, short of connections,
// lost some or measured nothing"); the process names come from the
// machine, so they are escaped.
func TestContendedPointsSaySo(t *testing.T) {
	t.Parallel()
	r := twoArmBounds(t)
	marked := 0
	for i := range r.Curve {
		p := &r.Curve[i]
		if p.Role != result.RoleSweep || !p.Clean {
			continue
		}
		p.Clean, p.Contended = false, true
		p.ServerCPU.Attribution = &result.Attribution{Foreign: 0.15, Tasks: []result.ForeignTask{{Comm: "hog<script>", Pid: 4242, Fraction: 0.15}}}
		marked++
	}
	if marked == 0 {
		t.Fatal("no clean sweep point to contend")
	}
	md := Render(mustCompare(t, nil, r, CompareOptions{}), RenderOptions{})
	want := fmt.Sprintf("two-arm run: %d of %d points were contended: their pinned CPUs were shared with other work (the first: other processes took 15\\.0%% of the server CPUs", marked, len(r.Curve))
	if !strings.Contains(md, want) || !strings.Contains(md, `hog&lt;script&gt; \(pid 4242\) 15%`) {
		t.Errorf("the comment does not name the contention %q:\n%s", want, md)
	}
	if strings.Contains(md, "<script") {
		t.Error("a process name went into the comment unescaped")
	}
	if strings.Contains(md, "short of connections") {
		t.Error("contended points are still called saturated or short of connections")
	}
}

// The runs table states the client pattern a ceiling was measured with,
// when the generator reported one (meta.client_io).
func TestRunsShowClientIO(t *testing.T) {
	r := &result.Result{Warnings: []string{}}
	r.Meta.Generator = "ceiling-load"
	r.Meta.ClientIO = "loop, batch-wake"
	var b strings.Builder
	renderRuns(&b, &Comparison{Head: r})
	if !strings.Contains(b.String(), "| generator | "+text("ceiling-load  (client: loop, batch-wake)")+" |") {
		t.Errorf("the runs table does not name the client pattern:\n%s", b.String())
	}
	r.Meta.ClientIO = ""
	b.Reset()
	renderRuns(&b, &Comparison{Head: r})
	if strings.Contains(b.String(), "client:") {
		t.Errorf("a run without a reported pattern names one:\n%s", b.String())
	}
}

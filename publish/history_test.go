package publish

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
)

func TestHistoryRoundTrip(t *testing.T) {
	t.Parallel()
	floor := 2.5
	var h []HistoryEntry
	for i := range 4 {
		h = AppendHistory(h, HistoryEntry{GitRef: fmt.Sprint(i), Generator: "g", ThroughputPerS: float64(i), NoiseFloorPct: &floor}, 10)
	}
	got, err := ParseHistory(FormatHistory(h), "h")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestAppendHistory(t *testing.T) {
	t.Parallel()
	e := func(ref, gen string, v float64) HistoryEntry {
		return HistoryEntry{GitRef: ref, Generator: gen, ThroughputPerS: v}
	}
	tests := []struct {
		name string
		in   []HistoryEntry
		add  HistoryEntry
		max  int
		want []HistoryEntry
	}{
		{"empty", nil, e("a", "g", 1), 3, []HistoryEntry{e("a", "g", 1)}},
		{"append", []HistoryEntry{e("a", "g", 1)}, e("b", "g", 2), 3, []HistoryEntry{e("a", "g", 1), e("b", "g", 2)}},
		{"same commit replaced, moves last", []HistoryEntry{e("a", "g", 1), e("b", "g", 2)}, e("a", "g", 9), 3,
			[]HistoryEntry{e("b", "g", 2), e("a", "g", 9)}},
		{"other generator kept", []HistoryEntry{e("a", "h", 1)}, e("a", "g", 2), 3, []HistoryEntry{e("a", "h", 1), e("a", "g", 2)}},
		{"bounded drops oldest", []HistoryEntry{e("a", "g", 1), e("b", "g", 2), e("c", "g", 3)}, e("d", "g", 4), 3,
			[]HistoryEntry{e("b", "g", 2), e("c", "g", 3), e("d", "g", 4)}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, AppendHistory(tt.in, tt.add, tt.max)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestParseHistoryErrors(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"{\"git_ref\":\"a\"}\n{oops\n": "h:2: ",
		"{\"throughput_per_s\":1}\n":   "h:1: git_ref: missing",
	} {
		if _, err := ParseHistory([]byte(in), "h"); err == nil || err.Error()[:len(want)] != want {
			t.Errorf("ParseHistory(%q) = %v, want prefix %q", in, err, want)
		}
	}
}

// oldEntry is a line written before entries kept every batch's ceiling
// (docs/publish.md's example): it must stay readable.
const oldEntry = `{"git_ref":"0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f","finished_at":"2026-11-28T10:16:00Z","generator":"ceiling-load","regime":"echo, batch 10, 256 B, 3 server cores, 1 generator core","batch":10,"connections":64,"throughput_per_s":140000,"p99_ns":4000000,"noise_floor_pct":4,"verdict":"server-saturated","lower_bound":false,"runner":"GitHub Actions 7"}`

// historyFixtures are the results testdata/history.jsonl is built from,
// oldest first: three runs of one regime, one capped (lower bounds), then
// the real sweeps on another machine (a regime change), a two-arm sweep,
// and a rooms sweep with an objective (another regime change).
var historyFixtures = []string{"base.json", "head_same.json", "head_mixed.json", "head_capped.json", "sweep_real.json", "two_arm_real.json", "rooms_real.json"}

// historyFixture is testdata/history.jsonl as this code builds it: the
// old entry, then EntryOf each fixture an hour apart.
func historyFixture(t *testing.T) []HistoryEntry {
	t.Helper()
	h, err := ParseHistory([]byte(oldEntry+"\n"), "old")
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range historyFixtures {
		e := EntryOf(mustRead(t, name))
		e.FinishedAt = h[0].FinishedAt.Add(time.Duration(i+1) * time.Hour)
		h = AppendHistory(h, e, DefaultHistoryMax)
	}
	return h
}

func TestHistoryFixture(t *testing.T) {
	t.Parallel()
	h := historyFixture(t)
	goldenFile(t, "history.jsonl", string(FormatHistory(h)))
	got, err := ParseHistory(readFixture(t, "history.jsonl"), "history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestEntryOfKeepsEveryCeiling(t *testing.T) {
	t.Parallel()
	r := mustRead(t, "rooms_real.json")
	e := EntryOf(r)
	if e.Objective == "" || e.Objective != r.Config.Objective {
		t.Errorf("objective %q, want %q", e.Objective, r.Config.Objective)
	}
	two := EntryOf(mustRead(t, "two_arm_real.json"))
	if two.Comparison == "" {
		t.Error("two-arm entry has no comparison verdict")
	}
	s := mustRead(t, "sweep_real.json")
	e = EntryOf(s)
	if len(e.Ceilings) != len(s.Ceilings) {
		t.Fatalf("%d ceilings, want %d", len(e.Ceilings), len(s.Ceilings))
	}
	for i, c := range s.Ceilings {
		got := e.Ceilings[i]
		if got.Batch != c.Batch || got.ThroughputPerS != c.ThroughputPerS || got.Connections != c.Connections || got.LowerBound != c.LowerBound || got.P99Ns != c.LatencyNs.P99 {
			t.Errorf("ceiling %d: %+v, want %+v", i, got, c)
		}
	}
	// An entry written before ceilings were kept reads its headline as
	// its only ceiling.
	old, err := ParseHistory([]byte(oldEntry), "old")
	if err != nil {
		t.Fatal(err)
	}
	want := []HistoryCeiling{{Batch: 10, Found: true, ThroughputPerS: 140000, Connections: 64, P99Ns: 4000000, Verdict: "server-saturated"}}
	if diff := cmp.Diff(want, old[0].CeilingsOf()); diff != "" {
		t.Errorf("old entry's ceilings (-want +got):\n%s", diff)
	}
}

func TestHistoryEntryBounded(t *testing.T) {
	t.Parallel()
	// The bound in DefaultHistoryMax's comment: an entry of a two-batch
	// sweep stays under 1 KB, so 500 stay under 500 KB.
	for _, name := range historyFixtures {
		line := FormatHistory([]HistoryEntry{EntryOf(mustRead(t, name))})
		if len(line) > 1024 {
			t.Errorf("%s: entry is %d bytes, want at most 1024:\n%s", name, len(line), line)
		}
	}
}

func TestHistoryTable(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := WriteHistoryTable(&b, historyFixture(t), 0); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "history_table.golden.txt", b.String())
	out := b.String()
	// Issue 33: 4 batch sizes and 3 series once needed 228 columns.
	for i, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > result.TableWidth {
			t.Errorf("line %d is %d columns, want at most %d: %q", i+1, n, result.TableWidth, line)
		}
	}
	for _, want := range []string{"▲", "≥", "0f0f0f0f0f0f", "batch 1024", "regime changed",
		// The change column: against the series' entry before; past
		// both floors (4.0% and 4.0%) marked, within them (2.5%) not.
		"+7.1% *", "+3.0% ", "-22.3% *", "a move beyond both runs' A-A noise floors"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "+3.0% *") {
		t.Errorf("a move within the noise floors is marked:\n%s", out)
	}
	b.Reset()
	if err := WriteHistoryTable(&b, historyFixture(t), 2); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(b.String(), "\n"); !strings.Contains(b.String(), "e5d20d59cb76") || strings.Contains(b.String(), "0f0f0f0f0f0f") {
		t.Errorf("--last 2 (%d lines):\n%s", lines, b.String())
	}
}

func TestHistoryTableHostile(t *testing.T) {
	t.Parallel()
	e := EntryOf(mustRead(t, "head_hostile.json"))
	e.Regime += "\x1b[2J\x1b]0;pwned\x07"
	e.GitRef = "evil\x1b[31m\nsecond line"
	var b strings.Builder
	if err := WriteHistoryTable(&b, []HistoryEntry{e}, 0); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07\r") || strings.Contains(b.String(), "\nsecond line") {
		t.Errorf("a control character reached the terminal: %q", b.String())
	}
}

// MergeHistory keeps the history's order whatever the order of the
// entries given (the results site once drew the newest commit leftmost,
// given results in git log order), puts new entries by their finish time,
// replaces an entry of the same series and commit where it stands, and
// keeps a two-arm run beside a sweep of the same commit.
func TestMergeHistoryOrder(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 11, 28, h, 0, 0, 0, time.UTC) }
	e := func(ref string, h int, tput float64) HistoryEntry {
		return HistoryEntry{GitRef: ref, FinishedAt: at(h), Generator: "ceiling-load", Scenario: "echo", ThroughputPerS: tput}
	}
	refs := func(h []HistoryEntry) string {
		var s []string
		for _, x := range h {
			s = append(s, fmt.Sprintf("%s:%.0f", x.GitRef, x.ThroughputPerS))
		}
		return strings.Join(s, " ")
	}
	// Newest first, as git log gives them; no history file.
	got := MergeHistory(nil, []HistoryEntry{e("c", 12, 3), e("b", 11, 2), e("a", 10, 1)})
	if refs(got) != "a:1 b:2 c:3" {
		t.Errorf("newest-first runs merged as %s, want oldest first", refs(got))
	}
	// The history's order stands; a run of a commit it has replaces that
	// entry in place; a newer run goes last, an older one before.
	hist := []HistoryEntry{e("a", 10, 1), e("b", 11, 2), e("c", 12, 3)}
	got = MergeHistory(hist, []HistoryEntry{e("d", 13, 4), e("b", 11, 20), e("a0", 9, 0)})
	if refs(got) != "a0:0 a:1 b:20 c:3 d:4" {
		t.Errorf("merged %s", refs(got))
	}
	// A two-arm run of commit c is another series: both figures stay.
	two := e("c", 12, 99)
	two.Comparison = "slower"
	got = MergeHistory(hist, []HistoryEntry{two})
	if refs(got) != "a:1 b:2 c:3 c:99" || got[2].Series() == got[3].Series() {
		t.Errorf("a two-arm run beside a sweep of the same commit: %s (%q, %q)", refs(got), got[2].Series(), got[3].Series())
	}
	if rows := TrendSeries(Trend(got)); len(rows) != 2 || len(rows[0]) != 3 || len(rows[1]) != 1 {
		t.Errorf("series %d, want the sweep's 3 and the two-arm run's 1", len(rows))
	}
	// Another machine along a series is a regime change, named; another
	// target name is not (ceiling compare names each arm by its commit:
	// two runs of one setup drew a red regime line between them).
	x, y := e("a", 10, 1), e("b", 11, 2)
	x.Target, y.Target = "HEAD@061cb02", "HEAD@5d6e7f8"
	x.Machine, y.Machine = "AMD EPYC 7763 64-Core Processor, 4 CPUs", "AMD EPYC 7763 64-Core Processor, 4 CPUs"
	if rows := Trend([]HistoryEntry{x, y}); rows[1].RegimeChanged {
		t.Errorf("two target names on one machine: %+v, want no regime change", rows[1])
	}
	y.Machine = "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz, 4 CPUs"
	if rows := Trend([]HistoryEntry{x, y}); !rows[1].RegimeChanged || rows[1].PrevMachine != x.Machine || !strings.Contains(rows[1].RegimeChange("->"), "Xeon") {
		t.Errorf("another machine: %+v, want a regime change naming both", rows[1])
	}
}

// TestHistoryKeepsBadLines: a corrupt or truncated line is skipped on
// reading, named by its line, and written back as it was, after the
// entry it followed (or the nearest older one still there).
func TestHistoryKeepsBadLines(t *testing.T) {
	entry := func(ref string, tp float64) HistoryEntry {
		return HistoryEntry{GitRef: ref, Generator: "g", ThroughputPerS: tp, FinishedAt: time.Unix(int64(tp), 0).UTC()}
	}
	h := []HistoryEntry{entry("a", 1), entry("b", 2), entry("c", 3)}
	lines := strings.Split(strings.TrimSpace(string(FormatHistory(h))), "\n")
	data := "not json\n" + lines[0] + "\n" + lines[1] + "\n{\"git_ref\":\"tru\n" + lines[2] + "\n{\"batch\":1}\n"
	f, err := ReadHistory([]byte(data), "h.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != 3 || len(f.Bad) != 3 {
		t.Fatalf("%d entries, %d bad lines; want 3 and 3", len(f.Entries), len(f.Bad))
	}
	for i, want := range []string{"h.jsonl:1: invalid character", "h.jsonl:4: unexpected end", "h.jsonl:6: git_ref: missing"} {
		if !strings.HasPrefix(f.Bad[i].Error(), want) {
			t.Errorf("bad line %d: %v, want %q", i, f.Bad[i], want)
		}
	}
	if _, err := ParseHistory([]byte(data), "h.jsonl"); err == nil || !strings.HasPrefix(err.Error(), "h.jsonl:1:") {
		t.Errorf("ParseHistory is strict: %v", err)
	}
	// Append d and keep 3: a goes; b is republished (moves to the end).
	next := AppendHistory(AppendHistory(f.Entries, entry("d", 4), 3), entry("b", 5), 3)
	got := string(f.Format(next))
	// "{git_ref tru" followed b, which moved: it goes after the nearest
	// older entry still there (none: the start).
	want := "not json\n{\"git_ref\":\"tru\n" + lines[2] + "\n{\"batch\":1}\n" + string(FormatHistory(next[1:]))
	if got != want {
		t.Errorf("written back:\n%s\nwant:\n%s", got, want)
	}
}

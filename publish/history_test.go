package publish

import (
	"fmt"
	"testing"

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

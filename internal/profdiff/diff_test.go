package profdiff

import (
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
)

// recorded is the blocks of testdata/blocks: refserver profiled by perf
// on this machine, six blocks without --spin (a1 a2 b1..b4) and three
// with --spin 2us (s1..s3); blocks.json says how.
func recorded(t *testing.T, names ...string) []Block {
	t.Helper()
	var meta struct {
		NsPerSample int64              `json:"ns_per_sample"`
		Messages    map[string]float64 `json:"messages"`
	}
	data, err := os.ReadFile("testdata/blocks/blocks.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	var out []Block
	for _, n := range names {
		f, err := os.Open("testdata/blocks/" + n + ".folded.gz")
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParseFolded(zr)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		withPeriod(p, meta.NsPerSample)
		out = append(out, Block{Profile: p, Messages: meta.Messages[n]})
	}
	return out
}

// withPeriod gives a folded profile's samples their period.
func withPeriod(p *Profile, ns int64) {
	for k, w := range p.Stacks {
		w.Ns = w.Samples * ns
		p.Stacks[k] = w
	}
	p.Ns = p.Samples * ns
}

const spinFrame = "github.com/ceiling-bench/ceiling/refserver.spin"

// TestSpinLeadsTheGrowth: refserver --spin 2us against refserver, three
// blocks each: spin is listed as grown, first; its callers grew as much
// but are diluted by their other work, so they rank below it.
func TestSpinLeadsTheGrowth(t *testing.T) {
	for _, base := range [][]string{{"a1", "a2", "b1"}, {"b2", "b3", "b4"}} {
		d, err := Compare(recorded(t, base...), recorded(t, "s1", "s2", "s3"), 0)
		if err != nil {
			t.Fatal(err)
		}
		grew := d.Grew()
		if len(grew) < 3 {
			t.Fatalf("base %v: %d frames grew, want spin and its callees", base, len(grew))
		}
		if grew[0].Function != spinFrame {
			t.Errorf("base %v: the most grown frame is %s (score %.0f), want spin", base, grew[0].Function, grew[0].Score)
		}
		for _, f := range grew {
			if f.Function == "net/http.(*conn).serve" {
				t.Errorf("base %v: spin's caller %s is listed as grown (z %.1f): its change is within its spread", base, f.Function, f.Z)
			}
		}
		if d.Base.Blocks != 3 || d.Head.Blocks != 3 || d.Tested == 0 || d.ZCritical < 3 {
			t.Errorf("base %v: blocks %d/%d, tested %d, z %.2f", base, d.Base.Blocks, d.Head.Blocks, d.Tested, d.ZCritical)
		}
		spin := grew[0]
		if !(spin.HeadTotal > 2000 && spin.BaseTotal < 10) || !math.IsNaN(spin.ChangePct) && spin.ChangePct < 1000 {
			t.Errorf("base %v: spin costs %.1f -> %.1f ns per message", base, spin.BaseTotal, spin.HeadTotal)
		}
	}
}

// TestAAListsNothing: every split of the six recorded blocks without
// --spin into two arms of three (ten A/A comparisons) lists no frame.
func TestAAListsNothing(t *testing.T) {
	all := []string{"a1", "a2", "b1", "b2", "b3", "b4"}
	blocks := recorded(t, all...)
	splits := 0
	for m := range 1 << len(all) {
		if m&1 == 0 || bitCount(m) != 3 {
			continue
		}
		var x, y []Block
		for i := range all {
			if m&(1<<i) != 0 {
				x = append(x, blocks[i])
			} else {
				y = append(y, blocks[i])
			}
		}
		splits++
		d, err := Compare(x, y, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append(d.Grew(), d.Shrank()...) {
			t.Errorf("split %06b: %s listed as %s (%.1f -> %.1f ns/msg, z %.2f)", m, f.Function, f.Verdict, f.BaseTotal, f.HeadTotal, f.Z)
		}
	}
	if splits != 10 {
		t.Fatalf("%d splits, want 10", splits)
	}
}

func bitCount(m int) int {
	n := 0
	for ; m > 0; m >>= 1 {
		n += m & 1
	}
	return n
}

// TestEachConditionOfTheRule: a frame that grew beyond the spread is
// listed; the same change with overlapping blocks, or too small a part
// of the whole, is not; one block an arm is untested.
func TestEachConditionOfTheRule(t *testing.T) {
	// Two frames: "work" steady at 10,000 samples, and "f", at the
	// samples given per block. Messages 1e6 per block, 1000 ns a sample.
	arm := func(fs ...int64) []Block {
		var out []Block
		for _, n := range fs {
			p := NewProfile()
			p.Add([]string{"main", "work"}, Weight{Samples: 10000, Ns: 10000 * 1000}, false)
			if n > 0 {
				p.Add([]string{"main", "f"}, Weight{Samples: n, Ns: n * 1000}, false)
			}
			out = append(out, Block{Profile: p, Messages: 1e6})
		}
		return out
	}
	verdict := func(base, head []Block) Frame {
		t.Helper()
		d, err := Compare(base, head, 0)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(d.Frames, func(f Frame) bool { return f.Function == "f" })
		return d.Frames[i]
	}
	if f := verdict(arm(1000, 1010, 990), arm(2000, 2020, 1980)); f.Verdict != Grew {
		t.Errorf("1000 -> 2000 samples of 10,000: %s (z %.1f)", f.Verdict, f.Z)
	}
	if f := verdict(arm(2000, 2020, 1980), arm(1000, 1010, 990)); f.Verdict != Shrank {
		t.Errorf("2000 -> 1000: %s", f.Verdict)
	}
	if f := verdict(arm(1000, 2100, 1500), arm(2000, 2020, 1980)); f.Verdict != WithinNoise {
		t.Errorf("overlapping blocks: %s (z %.1f)", f.Verdict, f.Z)
	}
	if f := verdict(arm(10, 10, 10), arm(60, 60, 60)); f.Verdict != WithinNoise || f.Z < 4 {
		t.Errorf("a change of 0.5%% of the whole: %s (z %.1f: its change is significant, too small to list)", f.Verdict, f.Z)
	}
	if f := verdict(arm(1000), arm(2000, 2000)); f.Verdict != Untested || f.Detectable != 0 {
		t.Errorf("one base block: %s", f.Verdict)
	}
	if f := verdict(arm(1000, 1000, 1000), arm(1000, 1000, 1000)); f.Verdict != WithinNoise || f.Detectable <= 0 {
		t.Errorf("no change: %s, detectable %.1f", f.Verdict, f.Detectable)
	}
}

// TestPerMessageNotPerSample: the same profile over twice the messages
// costs half as much per message; a head that samples as much but
// handles twice the messages shrank everywhere.
func TestPerMessageNotPerSample(t *testing.T) {
	b := recorded(t, "a1")[0]
	c, total, err := Costs(b)
	if err != nil {
		t.Fatal(err)
	}
	b.Messages *= 2
	c2, total2, _ := Costs(b)
	if math.Abs(total2*2-total) > 1e-9*total {
		t.Errorf("whole cost %.3f over twice the messages is %.3f", total, total2)
	}
	for f, fc := range c {
		if math.Abs(c2[f].Total*2-fc.Total) > 1e-9*fc.Total || c2[f].Samples != fc.Samples {
			t.Fatalf("%s: %+v over twice the messages is %+v", f, fc, c2[f])
		}
	}
	root := "runtime.goexit.abi0"
	if !(c[root].Total <= total && c[root].Self <= c[root].Total) {
		t.Errorf("%s: self %.1f, total %.1f, whole %.1f", root, c[root].Self, c[root].Total, total)
	}
}

// TestCompareRefuses: inputs that give no cost per message.
func TestCompareRefuses(t *testing.T) {
	ok := recorded(t, "a1")
	noMsgs := []Block{{Profile: ok[0].Profile, Messages: 0}}
	noPeriod := []Block{{Profile: &Profile{Stacks: map[string]Weight{"a": {Samples: 1}}, Samples: 1}, Messages: 5}}
	for name, c := range map[string][2][]Block{
		"no base":     {nil, ok},
		"no messages": {ok, noMsgs},
		"no period":   {noPeriod, ok},
	} {
		if _, err := Compare(c[0], c[1], 0); err == nil {
			t.Errorf("%s: compared", name)
		}
	}
	if _, err := Compare(ok, ok, 1.5); err == nil {
		t.Error("alpha 1.5 taken")
	}
}

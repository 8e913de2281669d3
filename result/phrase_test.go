package result

import (
	"strings"
	"testing"
)

// TestFormatP: one way to write a p-value: three decimals after "=",
// "< 0.001" below (never "p = 0.000", nor "p = <0.001"), and the table
// cell without "p =".
func TestFormatP(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		p          *float64
		text, cell string
	}{
		{f(0.0078125), "p = 0.008", "0.008"},
		{f(0.000155), "p < 0.001", "< 0.001"},
		{f(0.0004999), "p < 0.001", "< 0.001"},
		{f(0.001), "p = 0.001", "0.001"},
		{f(1), "p = 1.000", "1.000"},
		{nil, "p = n/a", "n/a"},
	} {
		if got := FormatP(tt.p); got != tt.text {
			t.Errorf("FormatP(%v) = %q, want %q", *ptrOr(tt.p), got, tt.text)
		}
		if got := PCell(tt.p); got != tt.cell {
			t.Errorf("PCell(%v) = %q, want %q", *ptrOr(tt.p), got, tt.cell)
		}
	}
}

func ptrOr(p *float64) *float64 {
	if p == nil {
		return new(float64)
	}
	return p
}

// TestPhrase: every token a person may read has words without an
// underscore, and a token the table does not know is still said in words.
func TestPhrase(t *testing.T) {
	for token, words := range Phrases() {
		if words == "" || strings.Contains(words, "_") {
			t.Errorf("Phrase(%q) = %q", token, words)
		}
	}
	for _, token := range []string{CompareWithinNoise, CompareCannotConclude, ResilienceCannotConclude, RoleAARepeat, RoleHeadroom} {
		if strings.Contains(Phrase(token), "_") {
			t.Errorf("Phrase(%q) = %q", token, Phrase(token))
		}
	}
	if got := Phrase("stopped_by_budget"); got != "stopped by budget" {
		t.Errorf("an unknown token: %q", got)
	}
}

// TestLevelWhy: a look's level below alpha says which look and why;
// alpha itself needs no word.
func TestLevelWhy(t *testing.T) {
	if got := LevelWhy(StopFixed, 8, 8, 0.05, 0.05); got != "" {
		t.Errorf("a fixed design: %q", got)
	}
	got := LevelWhy(StopOBF, 8, 13, 0.05, FinalLevel(StopOBF, 8, 13, 0.05))
	for _, want := range []string{"the look at 8 of 13 planned blocks", "O'Brien-Fleming's", "from the 6th", "keep 0.05"} {
		if !strings.Contains(got, want) {
			t.Errorf("LevelWhy = %q, want it to say %q", got, want)
		}
	}
}

// TestContendersSayTheSum: the share that broke the rule is the sum of
// what other processes took, said against the rule's 3% before each
// process's own share (a process that took 2% once read as if it had
// broken a 3% rule), and a sum just above the rule is never rounded
// onto it.
func TestContendersSayTheSum(t *testing.T) {
	a := &Attribution{Foreign: 0.0304, Tasks: []ForeignTask{{Comm: "python3", Pid: 4242, Fraction: 0.021}, {Comm: "bash", Pid: 7, Fraction: 0.0094}}}
	curve := []Point{{Contended: true, GeneratorCPU: CPUStats{Attribution: a}}}
	want := "other processes took up to 3.04% of the generator CPUs (a clean point allows 3%): python3 (pid 4242) up to 2.1%, bash (pid 7) up to 0.9%"
	if got := Contenders(curve); got != want {
		t.Errorf("Contenders\n = %q\nwant %q", got, want)
	}
}

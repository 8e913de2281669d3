package result

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/stats"
)

// What a person reads of a verdict, in one place. The document keeps its
// machine tokens (within_noise, cannot_conclude, aa_repeat): a program
// reads them. Every surface a person reads — the sweep's table and its
// last line, `ceiling compare`, the pull request's comment, the results
// site — says a token through Phrase and a p-value through FormatP, so the
// terminal, the comment and the site use the same words for the same
// verdict (TestOneVocabulary in cmd/ceiling renders all four).

// phrases are the tokens' words. A new token that a person may read
// (a verdict, a role, why a run stopped) gets its line here.
var phrases = map[string]string{
	// A comparison's verdict (ComparedPoint.Verdict) and its p99's.
	CompareFaster:         "faster",
	CompareSlower:         "slower",
	CompareWithinNoise:    "within noise",
	CompareCannotConclude: "cannot conclude",
	P99Better:             "better",
	P99Worse:              "worse",
	// A resilience point's (Fault.Verdict); cannot_conclude is above.
	ResilienceHeld:     "held",
	ResilienceDegraded: "degraded",
	// A point's role.
	RoleSweep:      "sweep",
	RoleAARepeat:   "A-A repeat",
	RoleCompare:    "compare",
	RoleProfile:    "profiled",
	RoleHeadroom:   "headroom probe",
	RoleResilience: "resilience",
	// The publisher's row with no baseline (publish.HeadOnly).
	"head_only": "head only",
}

// Phrase is a machine token in a person's words: "within noise" for
// within_noise. A token the table does not know (a document from a newer
// ceiling) is said with its underscores as spaces, never as a token.
func Phrase(token string) string {
	if p, ok := phrases[token]; ok {
		return p
	}
	return strings.ReplaceAll(token, "_", " ")
}

// Phrases are the tokens Phrase knows, for the tests that look for a
// token where a person reads.
func Phrases() map[string]string {
	out := make(map[string]string, len(phrases))
	for k, v := range phrases {
		out[k] = v
	}
	return out
}

// PDecimals is how many decimals a p-value is shown with; one below
// 10^-PDecimals is said as "p < 0.001".
const PDecimals = 3

// FormatP is a p-value as every reader sees it: "p = 0.008", "p < 0.001"
// below a thousandth (never "p = 0.000", nor "p = <0.001"), "p = n/a"
// for none. The comment keeps its spaces from breaking; nothing else
// writes a p-value its own way.
func FormatP(p *float64) string { return "p " + pRelation(p) }

// PCell is FormatP for a table whose column header says p: "0.008",
// "< 0.001", "n/a".
func PCell(p *float64) string {
	s := pRelation(p)
	if v, ok := strings.CutPrefix(s, "= "); ok {
		return v
	}
	return s
}

func pRelation(p *float64) string {
	floor := math.Pow10(-PDecimals)
	switch {
	case p == nil:
		return "= n/a"
	case *p < floor:
		return "< " + strconv.FormatFloat(floor, 'f', PDecimals, 64)
	}
	return "= " + strconv.FormatFloat(*p, 'f', PDecimals, 64)
}

// FormatLevel is a test's level as a threshold: "0.05", "0.0479" (three
// significant digits: a level is a design's number, not a measurement).
func FormatLevel(level float64) string { return strconv.FormatFloat(level, 'g', 3, 64) }

// LevelWhy says which look a compared point's test was, when a
// sequential stopping rule held it to a level below alpha, and why; ""
// when it was held to alpha (one look at the end). Each look after a
// block is a test, and the rule shares alpha out over the looks so that
// the chance of any false call over all of them stays alpha
// (SequentialLevel, FinalLevel): one look's level is below alpha. stop,
// reps and alpha are the comparison's; n is the clean blocks the look
// saw. It reads after "the level of".
func LevelWhy(stop string, n, reps int, alpha, level float64) string {
	if level <= 0 || FormatLevel(level) == FormatLevel(alpha) {
		return ""
	}
	rule := "Pocock's"
	if stop == StopOBF {
		rule = "O'Brien-Fleming's"
	}
	return fmt.Sprintf("the look at %d of %d planned blocks under %s stopping rule (COMPARE_STOP), which looks after every clean block from the %s, each look below α = %s, so that all of them together keep %s",
		n, reps, rule, ordinal(stats.MinPairs(alpha)), FormatLevel(alpha), FormatLevel(alpha))
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// VerdictPhrase is a compared point's verdict in words, "(at least)"
// when it rests on a lower bound.
func VerdictPhrase(p ComparedPoint) string {
	if p.AtLeast {
		return Phrase(p.Verdict) + " (at least)"
	}
	return Phrase(p.Verdict)
}

package publish

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/publish/schema"
	"github.com/ceiling-bench/ceiling/result"
)

// A document whose comparison does not follow from its own samples is
// refused, by Compare and by Read, naming the field: the verdict the
// comment shows and --fail-on gates on is the one the samples give.
func TestCompareRefusesAComparisonNotFromItsSamples(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		edit func(r *result.Result)
		path string
	}{
		{"verdict edited", func(r *result.Result) { r.Comparison.Headline.Verdict = Faster }, "comparison.headline.verdict"},
		{"point verdict edited", func(r *result.Result) { r.Comparison.Points[1].Verdict = Slower }, "comparison.points[1].verdict"},
		{"change edited", func(r *result.Result) { *r.Comparison.Headline.ChangePct = -1 }, "comparison.headline.change_pct"},
		{"sample edited", func(r *result.Result) {
			for i, p := range r.Curve {
				if p.Role == result.RoleCompare && p.Arm == result.ArmHead && p.Batch == 10 {
					r.Curve[i].ThroughputPerS *= 1.3
					break
				}
			}
		}, "comparison.headline."},
		{"comparison dropped", func(r *result.Result) { r.Comparison = nil }, "comparison"},
		{"alpha edited", func(r *result.Result) { r.Config.Alpha = 0.5 }, "comparison.alpha"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := twoArmSlower(t)
			tt.edit(r)
			_, err := Compare(nil, r, CompareOptions{HeadName: "pr.json"})
			var ce *ComparisonError
			if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "pr.json: ") || !hasProblem(ce.Problems, tt.path) {
				t.Fatalf("Compare = %v, want a ComparisonError naming %s", err, tt.path)
			}
			data, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Read(data, "pr.json")
			var ve *ValidationError
			if !errors.As(err, &ve) || !hasProblem(ve.Problems, tt.path) {
				t.Errorf("Read = %v, want a ValidationError naming %s", err, tt.path)
			}
		})
	}
}

func hasProblem(ps []schema.Problem, prefix string) bool {
	for _, p := range ps {
		if strings.HasPrefix(p.Path, prefix) {
			return true
		}
	}
	return false
}

// A comparison in a single-arm document (no point has an arm) is refused:
// it compares nothing that was measured.
func TestCompareRefusesAComparisonWithoutArms(t *testing.T) {
	t.Parallel()
	r := mustRead(t, "head_same.json")
	r.Comparison = twoArmSlower(t).Comparison
	if _, err := Compare(nil, r, CompareOptions{}); err == nil || !strings.Contains(err.Error(), "comparison: present, but no curve point has an arm") {
		t.Errorf("Compare = %v", err)
	}
}

func TestFailOn(t *testing.T) {
	t.Parallel()
	slower := mustCompare(t, nil, twoArmSlower(t), CompareOptions{})
	err := FailOn(slower, FailOnSlower)
	var re *RegressionError
	if !errors.As(err, &re) || re.Headline.Batch != 10 || !strings.Contains(err.Error(), "significantly slower: -12.") {
		t.Errorf("FailOn(slower) = %v, want a RegressionError at batch 10", err)
	}
	if err := FailOn(slower, FailOnNever); err != nil {
		t.Errorf("FailOn(never) = %v", err)
	}
	for name, c := range map[string]*Comparison{
		"A/A":            mustCompare(t, nil, twoArmSame(t), CompareOptions{}),
		"faster, capped": mustCompare(t, nil, twoArmBounds(t), CompareOptions{}),
		"cross-run -20%": mustCompare(t, mustRead(t, "base.json"), mustRead(t, "head_mixed.json"), CompareOptions{}),
		"head only":      mustCompare(t, nil, mustRead(t, "head_same.json"), CompareOptions{}),
	} {
		if err := FailOn(c, FailOnSlower); err != nil {
			t.Errorf("%s: FailOn(slower) = %v, want nil", name, err)
		}
	}
	var oe *OptionError
	if err := FailOn(slower, "sometimes"); !errors.As(err, &oe) || !errors.Is(err, ErrFailOn) {
		t.Errorf("FailOn(sometimes) = %v, want an OptionError", err)
	}
}

// An option Commit refuses is an *OptionError, so the command line maps it
// to exit status 2 without reading the message.
func TestCommitOptionErrorIsTyped(t *testing.T) {
	t.Parallel()
	// A well-formed SHA, so the option check is what refuses it.
	r, raw := resultAt(t, strings.Repeat("ab", 20), 1)
	_, err := Commit(context.Background(), r, raw, CommitOptions{Repo: t.TempDir(), Path: "../x.json"})
	var oe *OptionError
	if !errors.As(err, &oe) {
		t.Errorf("Commit with --path ../x.json = %v (%T), want an *OptionError", err, err)
	}
}

// Every chart colour stays readable on GitHub's light and dark
// backgrounds (WCAG contrast ratio; 3:1 is the floor for graphics).
func TestChartColorsContrast(t *testing.T) {
	t.Parallel()
	for _, c := range ChartColors {
		for _, bg := range []string{"#ffffff", "#0d1117"} {
			if r := contrast(c, bg); r < 4 {
				t.Errorf("colour %s on %s: contrast %.2f, want at least 4", c, bg, r)
			}
		}
	}
}

func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	return (math.Max(la, lb) + 0.05) / (math.Min(la, lb) + 0.05)
}

func luminance(hex string) float64 {
	ch := func(i int) float64 {
		v, _ := strconv.ParseUint(hex[i:i+2], 16, 8)
		c := float64(v) / 255
		if c <= 0.03928 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(1) + 0.7152*ch(3) + 0.0722*ch(5)
}

func TestAxisTop(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]float64{150000: 200000, 181000: 200000, 182000: 250000, 9: 10, 420000: 500000, 0: 1} {
		if got := AxisTop(v); got != want {
			t.Errorf("AxisTop(%v) = %v, want %v", v, got, want)
		}
	}
}

// Every head repeat at the headline failed: nothing to test, and the
// comment says so rather than showing a figure.
func TestTwoArmHeadlineWithoutSamples(t *testing.T) {
	t.Parallel()
	r := twoArmDoc(t, result.DefaultCompareReps, map[int]armPlan{10: {factor: 0.8, headFailed: 8}, 100: {factor: 1}})
	c := mustCompare(t, nil, r, CompareOptions{})
	if c.Headline.Verdict != CannotConclude || c.Headline.DeltaPct != nil || FailOn(c, FailOnSlower) != nil {
		t.Fatalf("headline %+v", c.Headline)
	}
	md := Render(c, RenderOptions{})
	_, line := titleAndVerdict(md)
	if !strings.Contains(line, "headline *cannot conclude*, n/a (0\u00a0pairs); too few clean pairs to detect any change") {
		t.Errorf("verdict line %q", line)
	}
	if !strings.Contains(md, "Too few samples at batch 10, 64 connections: n = 8 + 0 of the 8 per arm asked for (8 repeats failed or were not clean).") {
		t.Errorf("no too-few-samples alert:\n%.1200s", md)
	}
}

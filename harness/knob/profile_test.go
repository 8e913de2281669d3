package knob

import (
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/result"
)

// TestCompareProfile: auto profiles a slower headline only, on every
// verdict, off none; a mode of another name is refused before anything
// boots, naming the variable.
func TestCompareProfile(t *testing.T) {
	for _, c := range []struct {
		mode, verdict string
		want          bool
	}{
		{ProfileAuto, result.CompareSlower, true}, {ProfileAuto, result.CompareFaster, false},
		{ProfileAuto, result.CompareWithinNoise, false}, {ProfileAuto, result.CompareCannotConclude, false},
		{ProfileOn, result.CompareWithinNoise, true}, {ProfileOff, result.CompareSlower, false},
	} {
		if got := WantsProfile(c.mode, c.verdict); got != c.want {
			t.Errorf("COMPARE_PROFILE=%s, %s: %v", c.mode, c.verdict, got)
		}
	}
	if o := DefaultOptions(false); o.CompareProfile != ProfileAuto {
		t.Errorf("default %q", o.CompareProfile)
	}
	for _, k := range Knobs {
		if k.Env != "COMPARE_PROFILE" {
			continue
		}
		o := DefaultOptions(false)
		if err := k.Parse(&o, k.Env, "sometimes"); err == nil {
			err = k.Check(&o)
			if err == nil || !strings.Contains(err.Error(), "sometimes") {
				t.Errorf("COMPARE_PROFILE=sometimes: %v", err)
			}
		}
		return
	}
	t.Fatal("no COMPARE_PROFILE knob")
}

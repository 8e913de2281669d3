package pinning

import (
	"slices"
	"testing"
)

func TestSupervisorEnvRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in, super []string
	}{
		{"no GORACE", []string{"A=1"},
			[]string{"A=1", "GORACE=atexit_sleep_ms=0", envGoraceWas + "=unset"}},
		{"the caller's GORACE", []string{"GORACE=halt_on_error=1", "A=1"},
			[]string{"A=1", "GORACE=halt_on_error=1 atexit_sleep_ms=0", envGoraceWas + "==halt_on_error=1"}},
		{"an empty GORACE", []string{"GORACE="},
			[]string{"GORACE= atexit_sleep_ms=0", envGoraceWas + "=="}},
		{"a stale record from an outer supervisor", []string{"A=1", envGoraceWas + "=unset"},
			[]string{"A=1", "GORACE=atexit_sleep_ms=0", envGoraceWas + "=unset"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			super := supervisorEnv(slices.Clone(tc.in), true)
			if !slices.Equal(super, tc.super) {
				t.Errorf("supervisor's env %q, want %q", super, tc.super)
			}
			want := slices.DeleteFunc(slices.Clone(tc.in), func(kv string) bool { return kv == envGoraceWas+"=unset" })
			if got := targetEnv(super); !slices.Equal(sorted(got), sorted(want)) {
				t.Errorf("target's env %q, want %q", got, want)
			}
		})
	}
	if got := supervisorEnv([]string{"A=1"}, false); !slices.Equal(got, []string{"A=1"}) {
		t.Errorf("without -race the supervisor's env changed: %q", got)
	}
	if got := targetEnv([]string{"GORACE=x", "A=1"}); !slices.Equal(got, []string{"GORACE=x", "A=1"}) {
		t.Errorf("an env without the record changed: %q", got)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

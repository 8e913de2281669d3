package knob

import (
	"strconv"
	"strings"
	"testing"
)

// Every knob has an upper bound (issue 35): a ladder of more than
// MaxRungs, a duration above MaxDuration (a Go duration or bare seconds,
// however large), each refused by ApplyEnv naming its variable, and by
// CheckKnobs whichever layer set it. The values at the bound pass.
func TestKnobUpperBounds(t *testing.T) {
	rungs := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(" ")
			b.WriteString(strconv.Itoa(i))
		}
		return b.String()
	}
	tests := []struct {
		name, value, want string // want "": accepted
	}{
		{"BATCH_LADDER", rungs(MaxRungs), ""},
		{"BATCH_LADDER", rungs(MaxRungs + 1), "BATCH_LADDER: 65 rungs, at most 64"},
		{"BATCH_LADDER", rungs(10000), "BATCH_LADDER: 10000 rungs, at most 64"},
		{"CONNS_LADDER_10", rungs(MaxRungs + 1), "CONNS_LADDER_10: 65 rungs, at most 64"},
		{"DURATION", "1h", ""},
		{"DURATION", "1h0m1s", "DURATION: 1h0m1s is above the limit of 1h0m0s"},
		{"DURATION", "3600000000", "DURATION: 1000000h0m0s is above the limit"},
		{"DURATION", "1e300", "DURATION: \"1e300\" seconds is longer than a duration can hold"},
		{"WARMUP", "1000h", "WARMUP: 1000h0m0s is above the limit"},
		{"COMPARE_DURATION", "1000h", "COMPARE_DURATION: 1000h0m0s is above the limit"},
		{"COMPARE_WARMUP", "3601", "COMPARE_WARMUP: 1h0m1s is above the limit"},
		{"AGENTS_JOIN_TIMEOUT", "1000h", "AGENTS_JOIN_TIMEOUT: 1000h0m0s is above the limit"},
		{"ALLOW_LONG", "1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+short(tt.value), func(t *testing.T) {
			lookup, environ := envOf(tt.name, tt.value)
			o := DefaultOptions(false)
			err := o.ApplyEnv(lookup, environ)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
	// A flag or a default sets a field without ApplyEnv: CheckKnobs
	// judges it all the same, naming the variable and the flag.
	o := DefaultOptions(false)
	o.AgentsJoinTimeout = 2 * MaxDuration
	if errs := o.CheckKnobs(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "AGENTS_JOIN_TIMEOUT (--agents-join-timeout): 2h0m0s is above the limit of 1h0m0s") {
		t.Errorf("CheckKnobs: %v", errs)
	}
	o = DefaultOptions(false)
	o.BatchLadder = make(Ladder, MaxRungs+1)
	for i := range o.BatchLadder {
		o.BatchLadder[i] = i + 1
	}
	o.ConnsLadders = ConnsLadders{7: o.BatchLadder}
	if errs := o.CheckKnobs(); len(errs) != 2 || !strings.Contains(errs[0].Error(), "BATCH_LADDER (--batch-ladder): 65 rungs, at most 64") ||
		!strings.Contains(errs[1].Error(), "(--conns-ladder): batch 7: 65 rungs, at most 64") {
		t.Errorf("CheckKnobs: %v", errs)
	}
	o = DefaultOptions(false)
	o.ReadyTimeout = 2 * MaxDuration
	if errs := o.CheckKnobs(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "--ready-timeout: 2h0m0s is above the limit") {
		t.Errorf("CheckKnobs: %v", errs)
	}
}

func short(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

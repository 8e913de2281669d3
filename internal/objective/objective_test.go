package objective

import (
	"strings"
	"testing"
)

func TestParseAndEval(t *testing.T) {
	o, err := Parse("kinds.op.latency_ns.p99 <= 100ms, kinds.op.delivered_pct>=99.9%, errors == 0")
	if err != nil {
		t.Fatal(err)
	}
	if len(o) != 3 || o[0].Bound != 100e6 || o[1].Bound != 99.9 || o[1].Op != ">=" {
		t.Fatalf("parsed %+v", o)
	}
	summary := map[string]any{
		"errors": 0,
		"kinds": map[string]any{"op": map[string]any{
			"latency_ns":    map[string]any{"p99": 80e6},
			"delivered_pct": 99.95,
		}},
	}
	r, err := o.Eval(summary)
	if err != nil || !r.Met {
		t.Fatalf("met: %+v %v", r, err)
	}
	summary["kinds"].(map[string]any)["op"].(map[string]any)["latency_ns"] = map[string]any{"p99": 120e6}
	r, _ = o.Eval(summary)
	if r.Met || !strings.Contains(r.Reasons(), "kinds.op.latency_ns.p99 is 120ms") {
		t.Fatalf("not met: %+v (%s)", r, r.Reasons())
	}
	// A path the summary does not have is not met: never passed unchecked.
	o2, _ := Parse("kinds.opp.delivered_pct >= 99")
	r, _ = o2.Eval(summary)
	if r.Met || r.Conditions[0].Got != nil || !strings.Contains(r.Reasons(), "not in the point's summary") {
		t.Fatalf("missing path: %+v", r)
	}
}

func TestParseErrorsNameTheCondition(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"p99 100ms", "condition 1"},
		{"a.b <= 5, x <= fast", `condition 2 "x <= fast"`},
		{"<= 5", "no path"},
		{"a..b <= 5", "dotted names"},
		{"a <= 5xs", `bound "5xs"`},
		{"a <= NaN", "finite"},
	} {
		if _, err := Parse(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

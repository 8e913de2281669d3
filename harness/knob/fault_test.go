package knob

import "testing"

// TestParseFault: FAULT's value is KIND:SERVER@FRACTION, read back as it
// was written; anything else is refused (the harness's end-to-end
// FAULT test had these; the checks against a target are harness/fault's
// TestCheck, through Resolve the harness's TestResolve).
func TestParseFault(t *testing.T) {
	for _, v := range []string{"kill:node2", "kill@0.5", "crash:node2@0.5", "kill:node2@1", "kill:node2@0", "kill:@0.5", "kill:node2@half"} {
		if _, err := ParseFault(v); err == nil {
			t.Errorf("ParseFault(%q) accepted it", v)
		}
	}
	if f, err := ParseFault("stop:node2@0.25"); err != nil || f != (Fault{Kind: FaultStop, Server: "node2", Fraction: 0.25}) || f.String() != "stop:node2@0.25" {
		t.Errorf("ParseFault(stop:node2@0.25) = %+v, %v", f, err)
	}
	if f, err := ParseFault(""); err != nil || f != (Fault{}) {
		t.Errorf("ParseFault(\"\") = %+v, %v: want none", f, err)
	}
}

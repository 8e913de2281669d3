package knob

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLadder(t *testing.T) {
	tests := []struct {
		in      string
		want    Ladder
		wantErr string
	}{
		{in: "10 100 512 1024 4096", want: Ladder{10, 100, 512, 1024, 4096}},
		{in: "32,64,128", want: Ladder{32, 64, 128}},
		{in: " 4,  8 16 ", want: Ladder{4, 8, 16}},
		{in: "7", want: Ladder{7}},
		{in: "", wantErr: "BATCH_LADDER: empty ladder"},
		{in: "10 x", wantErr: `BATCH_LADDER: rung "x"`},
		{in: "10 0", wantErr: `rung "0"`},
		{in: "10 -5", wantErr: `rung "-5"`},
		{in: "100 10", wantErr: "increase strictly, 10 follows 100"},
		{in: "10 10", wantErr: "increase strictly"},
	}
	for _, tt := range tests {
		got, err := ParseLadder("BATCH_LADDER", tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseLadder(%q) error = %v, want it to contain %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseLadder(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseLadder(%q) (-want +got):\n%s", tt.in, diff)
		}
		if back, _ := ParseLadder("x", got.String()); !cmp.Equal(back, got) {
			t.Errorf("round trip of %q through String gave %v", tt.in, back)
		}
	}
}

func TestConnsLaddersFlag(t *testing.T) {
	c := ConnsLadders{}
	for _, s := range []string{"10=32,64", "4096=4 8"} {
		if err := c.Set(s); err != nil {
			t.Fatalf("Set(%q): %v", s, err)
		}
	}
	if diff := cmp.Diff(ConnsLadders{10: {32, 64}, 4096: {4, 8}}, c); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got, want := c.String(), "10=32,64 4096=4,8"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for _, bad := range []string{"10", "x=1", "10=", "10=5,4"} {
		if err := c.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

func TestDefaultConnsLadderEnds(t *testing.T) {
	// The method's defaults: 32..512 at batch 10 down to 4..64 at 4096,
	// every rung doubling.
	for _, b := range DefaultBatchLadder {
		l := DefaultConnsLadder(b)
		for i := 1; i < len(l); i++ {
			if l[i] != 2*l[i-1] {
				t.Errorf("batch %d ladder %v does not double at rung %d", b, l, i)
			}
		}
	}
	if got := DefaultConnsLadder(10); got[0] != 32 || got.Top() != 512 {
		t.Errorf("batch 10 ladder %v, want 32..512", got)
	}
	if got := DefaultConnsLadder(4096); got[0] != 4 || got.Top() != 64 {
		t.Errorf("batch 4096 ladder %v, want 4..64", got)
	}
}

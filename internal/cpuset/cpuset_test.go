package cpuset

import (
	"flag"
	"io"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/testenv"

	"github.com/google/go-cmp/cmp"
)

func TestParseWithin(t *testing.T) {
	online := Set{0, 1, 2, 3, 8}
	tests := []struct {
		in      string
		want    Set
		wantErr string // substring; "" means no error
	}{
		{in: "0", want: Set{0}},
		{in: "1,2,3", want: Set{1, 2, 3}},
		{in: "0-3", want: Set{0, 1, 2, 3}},
		{in: "0-3,8", want: Set{0, 1, 2, 3, 8}},
		{in: "8,0", want: Set{0, 8}},
		{in: " 2 , 3 ", want: Set{2, 3}},
		{in: "3-3", want: Set{3}},
		{in: "", wantErr: "SRV_CPUSET: empty cpu list"},
		{in: "  ", wantErr: "SRV_CPUSET: empty cpu list"},
		{in: "1,,2", wantErr: `SRV_CPUSET: malformed cpu list "1,,2": element 2 is empty`},
		{in: "1,", wantErr: "element 2 is empty"},
		{in: "a", wantErr: `"a" is not a cpu number`},
		{in: "-1", wantErr: `"" is not a cpu number`},
		{in: "1-", wantErr: `"" is not a cpu number`},
		{in: "0x1", wantErr: `"0x1" is not a cpu number`},
		{in: "1-2-3", wantErr: `"2-3" is not a cpu number`},
		{in: "3-1", wantErr: `SRV_CPUSET: malformed cpu list "3-1": range "3-1" is reversed`},
		{in: "1,1", wantErr: `SRV_CPUSET: cpu 1 is listed twice in "1,1"`},
		{in: "0-2,2", wantErr: "cpu 2 is listed twice"},
		{in: "1024", wantErr: "cpu 1024 is out of range (0-1023)"},
		{in: "99999999999999999999", wantErr: "out of range"},
		{in: "7", wantErr: "SRV_CPUSET: cpu 7 is not online (online: 0-3,8)"},
		{in: "2-5", wantErr: "cpu 4 is not online"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseWithin("SRV_CPUSET", tt.in, online)
			testenv.ErrContains(t, err, tt.wantErr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseWithin(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseWithinNilOnlineSkipsOnlineCheck(t *testing.T) {
	got, err := ParseWithin("LT_CPUSET", "500", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Set{500}, got); diff != "" {
		t.Error(diff)
	}
}

func TestParseAgainstThisMachine(t *testing.T) {
	if !supported {
		t.Skip(ErrUnsupported)
	}
	online, err := Online()
	if err != nil {
		t.Fatal(err)
	}
	if len(online) == 0 {
		t.Fatal("no online cpus")
	}
	last := online[len(online)-1]
	if _, err := Parse("LT_CPUSET", online.String()); err != nil {
		t.Errorf("Parse(online list %q): %v", online, err)
	}
	_, err = Parse("LT_CPUSET", "1023")
	if last < 1023 {
		testenv.ErrContains(t, err, "LT_CPUSET: cpu 1023 is not online (online: "+online.String()+")")
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		in   Set
		want string
	}{
		{nil, ""},
		{Set{0}, "0"},
		{Set{0, 1}, "0-1"},
		{Set{0, 1, 2, 3, 8}, "0-3,8"},
		{Set{1, 3, 5}, "1,3,5"},
		{Set{0, 2, 3, 4, 9, 10}, "0,2-4,9-10"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%v.String() = %q, want %q", []int(tt.in), got, tt.want)
		}
		if tt.in == nil {
			continue
		}
		back, err := ParseWithin("", tt.want, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.in, back); diff != "" {
			t.Errorf("round trip of %q (-want +got):\n%s", tt.want, diff)
		}
	}
}

func TestOverlap(t *testing.T) {
	tests := []struct {
		a, b, want Set
	}{
		{Set{0}, Set{1, 2, 3}, nil},
		{Set{0, 1}, Set{1, 2}, Set{1}},
		{Set{0, 1, 2, 3}, Set{1, 3, 5}, Set{1, 3}},
		{nil, Set{1}, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Overlap(tt.a, tt.b)); diff != "" {
			t.Errorf("Overlap(%v, %v) (-want +got):\n%s", tt.a, tt.b, diff)
		}
	}
}

func TestFlagValue(t *testing.T) {
	if !supported {
		t.Skip(ErrUnsupported)
	}
	var opts struct{ Server Set }
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&opts.Server, "server-cpus", "server CPU list")
	if err := fs.Parse([]string{"-server-cpus", "0"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Set{0}, opts.Server); diff != "" {
		t.Error(diff)
	}
	err := fs.Parse([]string{"-server-cpus", "1,1"})
	testenv.ErrContains(t, err, `invalid value "1,1" for flag -server-cpus: cpu 1 is listed twice`)
}

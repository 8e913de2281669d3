package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load/scenario/fanout"

	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/google/go-cmp/cmp"
)

func envOf(kv ...string) (func(string) (string, bool), []string) {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	var environ []string
	for k, v := range m {
		environ = append(environ, k+"="+v)
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }, environ
}

func TestApplyEnv(t *testing.T) {
	lookup, environ := envOf(
		"BATCH_LADDER", "10 100",
		"CONNS_LADDER_100", "8,16",
		"RECORD_SIZE", "512",
		"REPS", "2",
		"DURATION", "5",
		"WARMUP", "500ms",
		"SCENARIO", "fanout",
		"OUT", "/tmp/x.json",
		"SRV_CPUSET", "", // make exports unset variables as empty: ignored
	)
	o := DefaultOptions(false)
	if err := o.ApplyEnv(lookup, environ); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Ladder{10, 100}, o.BatchLadder); diff != "" {
		t.Errorf("BatchLadder (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Ladder{8, 16}, o.ConnsLadder(100)); diff != "" {
		t.Errorf("ConnsLadder(100) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(DefaultConnsLadder(10), o.ConnsLadder(10)); diff != "" {
		t.Errorf("ConnsLadder(10) should stay default (-want +got):\n%s", diff)
	}
	got := []any{o.RecordSize, o.Reps, o.Duration, o.Warmup, o.Scenario, o.Out, len(o.ServerCPUs)}
	want := []any{512, 2, 5 * time.Second, 500 * time.Millisecond, "fanout", "/tmp/x.json", 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestApplyEnvErrorsNameTheVariable(t *testing.T) {
	tests := []struct{ name, value, want string }{
		{"BATCH_LADDER", "10 abc", "BATCH_LADDER: rung"},
		{"CONNS_LADDER_10", "0", "CONNS_LADDER_10: rung"},
		{"CONNS_LADDER_ten", "1", "CONNS_LADDER_ten"},
		{"RECORD_SIZE", "-1", "RECORD_SIZE"},
		{"REPS", "0", "REPS"},
		{"HEADLINE_BATCH", "ten", "HEADLINE_BATCH"},
		{"DURATION", "soon", "DURATION"},
		{"WARMUP", "-1s", "WARMUP"},
		{"SRV_CPUSET", "0-", "SRV_CPUSET"},
		{"LT_CPUSET", "0,0", "LT_CPUSET"},
		{"ALLOW_OVERLAP", "maybe", "ALLOW_OVERLAP"},
	}
	for _, tt := range tests {
		lookup, environ := envOf(tt.name, tt.value)
		o := DefaultOptions(false)
		err := o.ApplyEnv(lookup, environ)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s=%q: error %v, want it to name %q", tt.name, tt.value, err, tt.want)
		}
	}
	if _, err := QuickFromEnv(func(string) (string, bool) { return "yes please", true }); err == nil || !strings.Contains(err.Error(), "QUICK") {
		t.Errorf("QUICK=yes please: error %v, want it to name QUICK", err)
	}
}

func TestResolve(t *testing.T) {
	two := pinning.CPUSet{0, 1}
	tests := []struct {
		name     string
		edit     func(*Options)
		avail    pinning.CPUSet
		srv, gen pinning.CPUSet
		wantErr  string
	}{
		{name: "defaults on 2 cores", avail: two, srv: pinning.CPUSet{1}, gen: pinning.CPUSet{0}},
		{name: "defaults on 4 cores", avail: pinning.CPUSet{0, 1, 2, 3}, srv: pinning.CPUSet{1, 2, 3}, gen: pinning.CPUSet{0}},
		{name: "one core overlaps with a note", avail: pinning.CPUSet{0}, srv: pinning.CPUSet{0}, gen: pinning.CPUSet{0}},
		{name: "only server given", avail: pinning.CPUSet{0, 1, 2, 3}, edit: func(o *Options) { o.ServerCPUs = pinning.CPUSet{2, 3} }, srv: pinning.CPUSet{2, 3}, gen: pinning.CPUSet{0}},
		{name: "only generator given", avail: pinning.CPUSet{0, 1, 2}, edit: func(o *Options) { o.GeneratorCPUs = pinning.CPUSet{1} }, srv: pinning.CPUSet{0, 2}, gen: pinning.CPUSet{1}},
		{name: "overlap refused", avail: two, edit: func(o *Options) { o.ServerCPUs, o.GeneratorCPUs = two, pinning.CPUSet{1} }, wantErr: "SRV_CPUSET 0-1 and LT_CPUSET 1 overlap on 1"},
		{name: "overlap allowed", avail: two, edit: func(o *Options) {
			o.ServerCPUs, o.GeneratorCPUs, o.AllowOverlap = two, pinning.CPUSet{1}, true
		}, srv: two, gen: pinning.CPUSet{1}},
		{name: "headline not a rung", avail: two, edit: func(o *Options) { o.HeadlineBatch = 7 }, wantErr: "HEADLINE_BATCH (--headline-batch): 7 is not a rung"},
		{name: "bad scenario", avail: two, edit: func(o *Options) { o.Scenario = "pubsub" }, wantErr: "SCENARIO (--scenario)"},
		{name: "zero duration", avail: two, edit: func(o *Options) { o.Duration = 0 }, wantErr: "DURATION (--duration)"},
		{name: "out is a dir", avail: two, edit: func(o *Options) { o.Out = t.TempDir() }, wantErr: "OUT (--out)"},
		{name: "generator missing", avail: two, edit: func(o *Options) { o.Generator = "/nonexistent/gen --x" }, wantErr: "GENERATOR (--generator)"},
		{name: "fanout gets its own batch ladder", avail: two, edit: func(o *Options) { o.Scenario = "fanout" }, srv: pinning.CPUSet{1}, gen: pinning.CPUSet{0}},
		{name: "server takes every cpu", avail: two, edit: func(o *Options) { o.ServerCPUs = two }, wantErr: "LT_CPUSET: not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions(false)
			if tt.edit != nil {
				tt.edit(&o)
			}
			_, err := o.resolveInto(tt.avail)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Resolve error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]pinning.CPUSet{tt.srv, tt.gen}, []pinning.CPUSet{o.ServerCPUs, o.GeneratorCPUs}); diff != "" {
				t.Errorf("server, generator sets (-want +got):\n%s", diff)
			}
			if len(tt.avail) == 1 && !o.AllowOverlap {
				t.Errorf("one CPU: overlap not allowed")
			}
		})
	}
}

func TestQuickDefaults(t *testing.T) {
	o := DefaultOptions(true)
	if !o.Quick || o.Duration != QuickDuration || len(o.BatchLadder) != 2 {
		t.Fatalf("quick options %+v", o)
	}
	n := len(Order(o.BatchLadder, o.ConnsLadder, o.Reps))
	if n != 4 {
		t.Errorf("quick sweep has %d points, want 4 (+1 A-A repeat)", n)
	}
}

// A quick sweep with a batch ladder of the user's own gets two-rung
// ladders for its batches, and no warning about the quick defaults' batches
// it does not sweep: the user set no CONNS_LADDER_<batch>.
func TestQuickWithOwnBatchLadder(t *testing.T) {
	o := DefaultOptions(true)
	o.BatchLadder = Ladder{10, 400}
	p, err := o.resolveInto(pinning.CPUSet{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]Ladder{10: o.ConnsLadder(10), 400: o.ConnsLadder(400)}
	want := map[int]Ladder{10: {32, 64}, 400: {8, 16}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("quick ladders (-want +got):\n%s", diff)
	}
	if got := ladderNotes(p.Notes); len(got) != 0 {
		t.Errorf("ladder notes %q, want none", got)
	}
	o = DefaultOptions(true)
	o.BatchLadder, o.ConnsLadders = Ladder{10}, ConnsLadders{10: {4}, 77: {1, 2}}
	if p, err = o.resolveInto(pinning.CPUSet{0, 1}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Ladder{4}, o.ConnsLadder(10)); diff != "" {
		t.Errorf("a ladder the user set wins over the quick one (-want +got):\n%s", diff)
	}
	if got := ladderNotes(p.Notes); len(got) != 1 || !strings.Contains(got[0], "CONNS_LADDER_77") {
		t.Errorf("ladder notes %q, want one about CONNS_LADDER_77", got)
	}
}

func ladderNotes(notes []string) []string {
	var out []string
	for _, n := range notes {
		if strings.Contains(n, "CONNS_LADDER_") {
			out = append(out, n)
		}
	}
	return out
}

func TestFanoutBatchLadder(t *testing.T) {
	for _, quick := range []bool{false, true} {
		o := DefaultOptions(quick)
		o.Scenario = "fanout"
		p, err := o.resolveInto(pinning.CPUSet{0, 1})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(Ladder(fanout.BatchLadder), o.BatchLadder); diff != "" {
			t.Errorf("quick=%v: fanout ladder (-want +got):\n%s", quick, diff)
		}
		if n := len(Order(o.BatchLadder, o.ConnsLadder, o.Reps)); quick && n != 4 {
			t.Errorf("quick fanout sweep has %d points, want 4", n)
		}
		for _, note := range p.Notes {
			if strings.Contains(note, "ignored") {
				t.Errorf("quick=%v: spurious note %q", quick, note)
			}
		}
	}
	o := DefaultOptions(false)
	o.Scenario, o.BatchLadder = "fanout", Ladder{2, 5}
	if _, err := o.resolveInto(pinning.CPUSet{0, 1}); err == nil || !strings.Contains(err.Error(), "HEADLINE_BATCH") {
		t.Errorf("a ladder given for fanout is kept as given (headline 10 not in it): %v", err)
	}
}

func TestParseSecondsAndFractionRefuseNonFinite(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"10", 10 * time.Second, ""},
		{"1.5", 1500 * time.Millisecond, ""},
		{"1m30s", 90 * time.Second, ""},
		{"NaN", 0, "not a finite duration"},
		{"Inf", 0, "not a finite duration"},
		{"-Inf", 0, "not a finite duration"},
		{"-1", 0, "negative"},
		{"-1s", 0, "negative"},
		{"1e12", 0, "longer than a duration can hold"},
	} {
		got, err := ParseSeconds(tt.in)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("ParseSeconds(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseSeconds(%q) = %v, %v; want an error saying %q", tt.in, got, err, tt.err)
		}
	}
	for _, in := range []string{"NaN", "+Inf", "-Inf", "infinity", "half"} {
		if f, err := ParseFraction(in); err == nil {
			t.Errorf("ParseFraction(%q) = %v, want an error", in, f)
		}
	}
	if f, err := ParseFraction("0.5"); err != nil || f != 0.5 {
		t.Errorf("ParseFraction(0.5) = %v, %v", f, err)
	}
}

// resolveInto is ResolveKnobs for a test that goes on reading o: o
// becomes the plan's resolved Options, and the plan comes back for its
// notes.
func (o *Options) resolveInto(available pinning.CPUSet) (*Plan, error) {
	p, err := ResolveKnobs(*o, available)
	if err == nil {
		*o = p.Options
	}
	return p, err
}

package harness

import (
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/schedule"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/load/scenario/fanout"

	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/google/go-cmp/cmp"
)

func TestResolve(t *testing.T) {
	two := pinning.CPUSet{0, 1}
	tests := []struct {
		name     string
		edit     func(*knob.Options)
		avail    pinning.CPUSet
		srv, gen pinning.CPUSet
		wantErr  string
	}{
		{name: "defaults on 2 cores", avail: two, srv: pinning.CPUSet{1}, gen: pinning.CPUSet{0}},
		{name: "defaults on 4 cores", avail: pinning.CPUSet{0, 1, 2, 3}, srv: pinning.CPUSet{1, 2, 3}, gen: pinning.CPUSet{0}},
		{name: "one core overlaps with a note", avail: pinning.CPUSet{0}, srv: pinning.CPUSet{0}, gen: pinning.CPUSet{0}},
		{name: "only server given", avail: pinning.CPUSet{0, 1, 2, 3}, edit: func(o *knob.Options) { o.ServerCPUs = pinning.CPUSet{2, 3} }, srv: pinning.CPUSet{2, 3}, gen: pinning.CPUSet{0}},
		{name: "only generator given", avail: pinning.CPUSet{0, 1, 2}, edit: func(o *knob.Options) { o.GeneratorCPUs = pinning.CPUSet{1} }, srv: pinning.CPUSet{0, 2}, gen: pinning.CPUSet{1}},
		{name: "overlap refused", avail: two, edit: func(o *knob.Options) { o.ServerCPUs, o.GeneratorCPUs = two, pinning.CPUSet{1} }, wantErr: "SRV_CPUSET 0-1 and LT_CPUSET 1 overlap on 1"},
		{name: "overlap allowed", avail: two, edit: func(o *knob.Options) {
			o.ServerCPUs, o.GeneratorCPUs, o.AllowOverlap = two, pinning.CPUSet{1}, true
		}, srv: two, gen: pinning.CPUSet{1}},
		{name: "headline not a rung", avail: two, edit: func(o *knob.Options) { o.HeadlineBatch = 7 }, wantErr: "HEADLINE_BATCH (--headline-batch): 7 is not a rung"},
		{name: "bad scenario", avail: two, edit: func(o *knob.Options) { o.Scenario = "pubsub" }, wantErr: "SCENARIO (--scenario)"},
		{name: "zero duration", avail: two, edit: func(o *knob.Options) { o.Duration = 0 }, wantErr: "DURATION (--duration)"},
		{name: "out is a dir", avail: two, edit: func(o *knob.Options) { o.Out = t.TempDir() }, wantErr: "OUT (--out)"},
		{name: "generator missing", avail: two, edit: func(o *knob.Options) { o.Generator = "/nonexistent/gen --x" }, wantErr: "GENERATOR (--generator)"},
		{name: "fanout gets its own batch ladder", avail: two, edit: func(o *knob.Options) { o.Scenario = "fanout" }, srv: pinning.CPUSet{1}, gen: pinning.CPUSet{0}},
		{name: "server takes every cpu", avail: two, edit: func(o *knob.Options) { o.ServerCPUs = two }, wantErr: "LT_CPUSET: not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := knob.DefaultOptions(false)
			if tt.edit != nil {
				tt.edit(&o)
			}
			_, err := resolveInto(&o, tt.avail)
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
	o := knob.DefaultOptions(true)
	if !o.Quick || o.Duration != knob.QuickDuration || len(o.BatchLadder) != 2 {
		t.Fatalf("quick options %+v", o)
	}
	n := len(schedule.Order(o.BatchLadder, o.ConnsLadder, o.Reps))
	if n != 4 {
		t.Errorf("quick sweep has %d points, want 4 (+1 A-A repeat)", n)
	}
}

// A quick sweep with a batch ladder of the user's own gets two-rung
// ladders for its batches, and no warning about the quick defaults' batches
// it does not sweep: the user set no CONNS_LADDER_<batch>.
func TestQuickWithOwnBatchLadder(t *testing.T) {
	o := knob.DefaultOptions(true)
	o.BatchLadder = knob.Ladder{10, 400}
	p, err := resolveInto(&o, pinning.CPUSet{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]knob.Ladder{10: o.ConnsLadder(10), 400: o.ConnsLadder(400)}
	want := map[int]knob.Ladder{10: {32, 64}, 400: {8, 16}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("quick ladders (-want +got):\n%s", diff)
	}
	if got := ladderNotes(p.Notes); len(got) != 0 {
		t.Errorf("ladder notes %q, want none", got)
	}
	o = knob.DefaultOptions(true)
	o.BatchLadder, o.ConnsLadders = knob.Ladder{10}, knob.ConnsLadders{10: {4}, 77: {1, 2}}
	if p, err = resolveInto(&o, pinning.CPUSet{0, 1}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(knob.Ladder{4}, o.ConnsLadder(10)); diff != "" {
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
		o := knob.DefaultOptions(quick)
		o.Scenario = "fanout"
		p, err := resolveInto(&o, pinning.CPUSet{0, 1})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(knob.Ladder(fanout.BatchLadder), o.BatchLadder); diff != "" {
			t.Errorf("quick=%v: fanout ladder (-want +got):\n%s", quick, diff)
		}
		if n := len(schedule.Order(o.BatchLadder, o.ConnsLadder, o.Reps)); quick && n != 4 {
			t.Errorf("quick fanout sweep has %d points, want 4", n)
		}
		for _, note := range p.Notes {
			if strings.Contains(note, "ignored") {
				t.Errorf("quick=%v: spurious note %q", quick, note)
			}
		}
	}
	o := knob.DefaultOptions(false)
	o.Scenario, o.BatchLadder = "fanout", knob.Ladder{2, 5}
	if _, err := resolveInto(&o, pinning.CPUSet{0, 1}); err == nil || !strings.Contains(err.Error(), "HEADLINE_BATCH") {
		t.Errorf("a ladder given for fanout is kept as given (headline 10 not in it): %v", err)
	}
}

// resolveInto is ResolveKnobs for a test that goes on reading o: o
// becomes the resolved Options, and the plan comes back for its notes.
func resolveInto(o *knob.Options, available pinning.CPUSet) (*Plan, error) {
	d := &draft{Options: *o}
	if err := d.resolveKnobs(available); err != nil {
		return nil, err
	}
	*o = d.Options
	return d.plan(redact.New()), nil
}

// planOf is o as a plan, unresolved: for a test of one run-time part.
func planOf(o knob.Options) *Plan { return (&draft{Options: o}).plan(nil) }

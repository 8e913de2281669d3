package publish

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/publish/schema"
	"github.com/ceiling-bench/ceiling/result"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sweep_real.json was written by a real `ceiling sweep` (two rungs per batch,
// 1 s points, on a 2-core machine), so the harness and the publisher are held
// to the same document. compare_real.json is a real two-arm sweep: refserver
// (base) against refserver --spin 15us (head), batches 10 and 1024, one rung
// each, 1 s points, on the same shared 2-core machine, whose starved
// generator made every compared point cannot_conclude.
func TestReadValidFixtures(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"base.json", "head_same.json", "head_mixed.json", "head_capped.json",
		"head_nofloor.json", "no_headline.json", "head_hostile.json", "ok_unknown_fields.json",
		"sweep_real.json", "compare_real.json"} {
		if _, err := Read(readFixture(t, name), name); err != nil {
			t.Errorf("Read(%s) = %v, want no error", name, err)
		}
	}
}

func TestReadMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want string // must appear in the error
	}{
		{"bad_missing_verdict.json", "curve[3].verdict: missing"},
		{"bad_headline_batch.json", "headline.batch: 50 is not in config.batch_ladder [10 100]"},
		{"bad_version.json", "schema_version: unsupported version 3 (this publisher reads 1 to 2)"},
		{"bad_verdict_value.json", `curve[1].verdict: "fast" is not one of`},
		{"bad_generator.json", `meta.generator: "../../etc" does not match`},
		{"bad_ladder_type.json", "config.batch_ladder: want array, got string"},
		{"bad_syntax.json", "invalid JSON at line 3, column"},
		{"bad_truncated.json", "the document ends early"},
	}
	for _, tt := range tests {
		_, err := Read(readFixture(t, tt.file), tt.file)
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("Read(%s) = %v, want a *ValidationError", tt.file, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), tt.file+": ") {
			t.Errorf("Read(%s) error\n got: %v\nwant: %s: ...%s...", tt.file, err, tt.file, tt.want)
		}
	}
}

func TestReadEmptyAndTrailing(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                             "stdin: document: empty",
		"  \n":                         "stdin: document: empty",
		`{"schema_version":1}` + " {}": "unexpected data after the JSON document",
		`[1,2]`:                        "document: want object, got array",
	} {
		_, err := Read([]byte(in), "stdin")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Read(%q) = %v, want %q", in, err, want)
		}
	}
}

// TestSchemaRequiredMatchesGo removes, one at a time, every field the schema
// file lists as required from a valid document, and checks that Read
// refuses it naming that field: the committed schema and the publisher
// cannot disagree about what a document must contain.
func TestSchemaRequiredMatchesGo(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := json.Unmarshal(readFixture(t, "base.json"), &doc); err != nil {
		t.Fatal(err)
	}
	addComparison(t, doc)
	// A calibration as CALIBRATE=1 records it (meta.calibration).
	doc["meta"].(map[string]any)["calibration"] = map[string]any{
		"calibration_version": 1, "generator_cpus": []int{0}, "sink_cpus": []int{1}, "record_size": 256,
		"caps":    []any{map[string]any{"scenario": "echo", "batch": 10, "msgs_per_s_per_core": 700000.0, "saturated": true, "projected": false}},
		"skipped": []any{},
	}
	if b, _ := json.Marshal(doc); true {
		if _, err := Read(b, "two-arm.json"); err != nil {
			t.Fatalf("the two-arm document itself: %v", err)
		}
	}
	var sch struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       map[string]struct {
			Required []string `json:"required"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(schema.Sweep, &sch); err != nil {
		t.Fatal(err)
	}
	// Where each $defs object appears in the fixture.
	at := map[string]string{"meta": "meta", "config": "config", "headline": "headline",
		"point": "curve.2", "ceiling": "ceilings.1", "latency": "headline.latency_ns",
		"comparison": "comparison", "compared_point": "comparison.headline", "arm_stats": "comparison.headline.base",
		"calibration": "meta.calibration",
		"memory":      "curve.2.server_memory", "memory_comparison": "comparison.headline.memory", "connection_ceiling": "connection_ceiling"}
	var cases [][]string
	for _, f := range sch.Required {
		cases = append(cases, []string{f})
	}
	for def, d := range sch.Defs {
		if d.Required == nil {
			continue
		}
		where, ok := at[def]
		if !ok {
			t.Errorf("$defs/%s has required fields but no place in this test", def)
			continue
		}
		for _, f := range d.Required {
			cases = append(cases, append(strings.Split(where, "."), f))
		}
	}
	if len(cases) < 30 {
		t.Fatalf("only %d required fields found in the schema; did its shape change?", len(cases))
	}
	for _, path := range cases {
		copyDoc := deepCopy(t, doc)
		deleteAt(t, copyDoc, path)
		b, _ := json.Marshal(copyDoc)
		_, err := Read(b, "x.json")
		want := strings.Join(path, ".") + ": missing"
		want = strings.Replace(strings.Replace(want, "curve.2", "curve[2]", 1), "ceilings.1", "ceilings[1]", 1)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("without %v: Read = %v, want %q", path, err, want)
		}
	}
}

// addComparison turns doc into a two-arm document: five repeats per arm
// of its headline point with role "compare" (the head 10% slower), and the
// comparison DecideComparison makes of them.
func addComparison(t *testing.T, doc map[string]any) {
	t.Helper()
	b, _ := json.Marshal(doc)
	var r result.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	// Each side's memory on every point, so that the comparison has
	// its memory test.
	base := uint64(9_000_000)
	for i := range r.Curve {
		pc := 17_000.0 + float64(i)
		r.Curve[i].ServerMemory = &result.Memory{Measure: result.MemoryPSS, Samples: 4, PeakBytes: base + 1, EndBytes: base, BaselineBytes: &base, Connections: 1, PerConnectionBytes: &pc}
	}
	var tmpl result.Point
	for _, p := range r.Curve {
		if p.Clean && p.Batch == r.Headline.Batch && p.Connections == r.Headline.Connections {
			tmpl = p
		}
	}
	for i := range 10 {
		p := tmpl
		p.Index, p.Role, p.Rep, p.Arm = len(r.Curve)+1, result.RoleCompare, i/2, result.ArmBase
		p.ThroughputPerS = tmpl.ThroughputPerS * (1 + float64(i)/1000)
		if i%2 == 1 {
			p.Arm, p.ThroughputPerS = result.ArmHead, p.ThroughputPerS*0.9
		}
		r.Curve = append(r.Curve, p)
	}
	r.Config.CompareReps, r.Config.Alpha = 5, 0.05 // the knobs the comparison is re-derived at
	r.Comparison = result.DecideComparison(r.Curve, r.Config)
	// A connection ceiling, as a connection-scale sweep has one.
	cc := result.ConnectionCeiling{Found: true, Connections: r.Headline.Connections, Objective: "latency_ns.p99 <= 50ms", ServerMemory: r.Curve[0].ServerMemory}
	r.ConnectionCeiling = &cc
	b, _ = json.Marshal(r)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	doc["curve"], doc["comparison"], doc["config"], doc["connection_ceiling"] = out["curve"], out["comparison"], out["config"], out["connection_ceiling"]
}

func deepCopy(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(v)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func deleteAt(t *testing.T, doc map[string]any, path []string) {
	t.Helper()
	var cur any = doc
	for _, k := range path[:len(path)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[k]
		case []any:
			var i int
			if err := json.Unmarshal([]byte(k), &i); err != nil {
				t.Fatal(err)
			}
			cur = c[i]
		}
	}
	m, ok := cur.(map[string]any)
	if !ok {
		t.Fatalf("%v: not an object in the fixture", path)
	}
	if _, ok := m[path[len(path)-1]]; !ok {
		t.Fatalf("%v: not in the fixture", path)
	}
	delete(m, path[len(path)-1])
}

func TestReadGitRefIsOneToken(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	if err := json.Unmarshal(readFixture(t, "base.json"), &doc); err != nil {
		t.Fatal(err)
	}
	doc["meta"].(map[string]any)["git_ref"] = "abc\n\nforged: trailer"
	b, _ := json.Marshal(doc)
	if _, err := Read(b, "x.json"); err == nil || !strings.Contains(err.Error(), "meta.git_ref: ") {
		t.Errorf("Read = %v, want a meta.git_ref error", err)
	}
}

// TestReadRefusesInconsistentFigures: the comment marks a lower bound by
// lower_bound alone, so a flag that contradicts its verdict is refused
// rather than published without the mark; and a headline, ceiling or noise
// floor that does not follow from the curve (edited in, or from a buggy
// sweep) is refused: only measured figures are published.
func TestReadRefusesInconsistentFigures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(doc map[string]any)
		want string
	}{
		{"headline", func(doc map[string]any) {
			h := doc["headline"].(map[string]any)
			h["verdict"], h["lower_bound"] = "generator-capped", false
		}, `headline.lower_bound: false, but the verdict "generator-capped" means true`},
		{"ceiling", func(doc map[string]any) {
			doc["ceilings"].([]any)[0].(map[string]any)["lower_bound"] = true
		}, "ceilings[0].lower_bound: true, but the verdict"},
		{"point", func(doc map[string]any) {
			doc["curve"].([]any)[0].(map[string]any)["lower_bound"] = true
		}, "curve[0].lower_bound: true, but the verdict"},
		{"headline", func(doc map[string]any) {
			doc["headline"].(map[string]any)["throughput_per_s"] = 999999.0
		}, "headline: clean true, 999999 msg/s"},
		{"ceiling", func(doc map[string]any) {
			doc["ceilings"].([]any)[1].(map[string]any)["connections"] = 1.0
		}, "ceilings[1]: found true"},
		{"noise floor", func(doc map[string]any) { doc["noise_floor_pct"] = 0.1 }, "noise_floor_pct: 0.1; the A-A repeat gives 4"},
	}
	for _, tt := range tests {
		if err := readEdited(t, "base.json", tt.edit); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Read = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// readEdited reads fixture name after edit changed its JSON.
func readEdited(t *testing.T, name string, edit func(doc map[string]any)) error {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(readFixture(t, name), &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Read(b, "x.json")
	return err
}

package payload

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden.json from the current code")

func TestGoldenVectors(t *testing.T) {
	if *update {
		var out []Golden
		for _, c := range GoldenCases {
			g, err := ComputeGolden(c)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, g)
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "golden.json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("testdata/golden.json rewritten; rebuild to embed it")
		return
	}
	n, err := CheckGolden()
	if err != nil {
		t.Fatal(err)
	}
	if n != len(GoldenCases) {
		t.Fatalf("checked %d vectors, want %d (golden.json out of date with GoldenCases?)", n, len(GoldenCases))
	}
}

func TestCheckGoldenCatchesAChange(t *testing.T) {
	saved := goldenJSON
	t.Cleanup(func() { goldenJSON = saved })
	goldenJSON = bytes.Replace(saved, []byte(`"pool_sha256": "`), []byte(`"pool_sha256": "0`), 1)
	if _, err := CheckGolden(); err == nil {
		t.Fatal("CheckGolden accepted a corrupted vector")
	}
}

func TestJSONValuesAreExactSizeAndParse(t *testing.T) {
	for _, size := range []int{MinJSONSize, MinJSONSize + 1, 256, 1000, 4096} {
		p, err := New(JSON, 3, size, 200)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < p.Len(); i++ {
			v := p.Value(i)
			if len(v) != size {
				t.Fatalf("size %d value %d: %d bytes", size, i, len(v))
			}
			var doc struct {
				ID     string  `json:"id"`
				TS     int64   `json:"ts"`
				Type   string  `json:"type"`
				User   string  `json:"user"`
				Region string  `json:"region"`
				Status string  `json:"status"`
				Amount float64 `json:"amount"`
				Text   string  `json:"text"`
			}
			if err := json.Unmarshal(v, &doc); err != nil {
				t.Fatalf("size %d value %d does not parse: %v\n%s", size, i, err, v)
			}
			if len(doc.ID) != 16 || doc.TS < baseTimeMs || doc.Type == "" || !strings.HasPrefix(doc.User, "user-") {
				t.Fatalf("size %d value %d: unexpected fields %+v", size, i, doc)
			}
		}
	}
}

func TestSameInputsSameBytesDifferentSeedsDiffer(t *testing.T) {
	for _, mode := range []string{JSON, Random} {
		a, _ := New(mode, 9, 300, 50)
		b, _ := New(mode, 9, 300, 50)
		c, _ := New(mode, 10, 300, 50)
		if !bytes.Equal(a.data, b.data) {
			t.Errorf("%s: same seed gave different bytes", mode)
		}
		if bytes.Equal(a.data, c.data) {
			t.Errorf("%s: seeds 9 and 10 gave the same bytes", mode)
		}
		if bytes.Equal(a.Value(0), a.Value(1)) {
			t.Errorf("%s: values 0 and 1 are equal", mode)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		mode    string
		size    int
		wantErr string
	}{
		{Constant, 1, ""},
		{Random, 1, ""},
		{JSON, MinJSONSize, ""},
		{JSON, MinJSONSize - 1, "--record-size"},
		{Constant, 0, "--record-size"},
		{"xml", 10, "--payload"},
	}
	for _, tt := range tests {
		err := Validate(tt.mode, tt.size)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if (tt.wantErr == "") != (got == "") || !strings.Contains(got, tt.wantErr) {
			t.Errorf("Validate(%q, %d) = %q, want error containing %q", tt.mode, tt.size, got, tt.wantErr)
		}
	}
}

func TestPoolSizeAndStarts(t *testing.T) {
	tests := []struct{ size, batch, conns, want int }{
		{256, 10, 16, 32768},           // 8 MiB / 256
		{64, 1, 1, PoolMaxValues},      // capped
		{1 << 20, 1, 1, 8},             // 8 values of 1 MiB
		{256, 4096, 64, 4096 * 64},     // never less than a batch per connection
		{PoolTargetBytes * 2, 1, 1, 1}, // one huge value
	}
	for _, tt := range tests {
		if got := PoolSize(tt.size, tt.batch, tt.conns); got != tt.want {
			t.Errorf("PoolSize(%d,%d,%d) = %d, want %d", tt.size, tt.batch, tt.conns, got, tt.want)
		}
	}
	p, _ := New(Constant, 0, 8, PoolSize(8, 10, 4))
	var starts []int
	for c := 0; c < 4; c++ {
		starts = append(starts, p.Start(c, 10))
	}
	if diff := cmp.Diff([]int{0, 10, 20, 30}, starts); diff != "" {
		t.Errorf("starts (-want +got):\n%s", diff)
	}
}

func TestValueDoesNotAllocate(t *testing.T) {
	p, _ := New(Random, 1, 64, 100)
	i := 0
	allocs := testing.AllocsPerRun(1000, func() { _ = p.Value(i); i++ })
	if allocs != 0 {
		t.Fatalf("Value allocates %v per call", allocs)
	}
}

// The first outputs of splitmix64 for seeds 0 and 1, from the reference
// implementation (Vigna's splitmix64.c), so other generators can match us.
func TestSplitmix64Reference(t *testing.T) {
	for _, tt := range []struct{ seed, want uint64 }{
		{0, 0xe220a8397b1dcdaf},
		{1, 0x910a2dec89025cc1},
	} {
		r := splitmix64{state: tt.seed}
		if got := r.next(); got != tt.want {
			t.Errorf("seed %d: got %#x, want %#x", tt.seed, got, tt.want)
		}
	}
}

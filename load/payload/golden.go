package payload

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Golden is one pinned vector: the first value in hex and the SHA-256 of a
// whole pool of Count values.
type Golden struct {
	Mode       string `json:"mode"`
	Seed       uint32 `json:"seed"`
	Size       int    `json:"size"`
	Count      int    `json:"count"`
	FirstHex   string `json:"first_hex"`
	PoolSHA256 string `json:"pool_sha256"`
}

// goldenJSON (testdata/golden.json) was produced once by `go test ./load/payload -run
// TestGoldenVectors -update` (which writes GoldenCases through
// ComputeGolden) and reviewed by eye: the json values parse, are exactly
// Size bytes, and the random ones differ by seed. Regenerate it only when
// the value format changes on purpose, and say so in the commit.
//
//go:embed testdata/golden.json
var goldenJSON []byte

// GoldenCases are the (mode, seed, size, count) tuples the vectors pin.
var GoldenCases = []Golden{
	{Mode: Constant, Seed: 1, Size: 16, Count: 4},
	{Mode: Constant, Seed: 1, Size: 256, Count: 100},
	{Mode: Random, Seed: 1, Size: 32, Count: 8},
	{Mode: Random, Seed: 7, Size: 32, Count: 8},
	{Mode: Random, Seed: 4294967295, Size: 1000, Count: 50},
	{Mode: JSON, Seed: 1, Size: MinJSONSize, Count: 8},
	{Mode: JSON, Seed: 1, Size: 256, Count: 100},
	{Mode: JSON, Seed: 7, Size: 256, Count: 100},
	{Mode: JSON, Seed: 0, Size: 1024, Count: 10},
}

// ComputeGolden fills FirstHex and PoolSHA256 for c from the current code.
func ComputeGolden(c Golden) (Golden, error) {
	p, err := New(c.Mode, c.Seed, c.Size, c.Count)
	if err != nil {
		return c, err
	}
	h := sha256.New() // over every value in order, however the pool stores them
	for i := range p.Len() {
		h.Write(p.Value(i))
	}
	c.FirstHex = hex.EncodeToString(p.Value(0))
	c.PoolSHA256 = hex.EncodeToString(h.Sum(nil))
	return c, nil
}

// LoadGolden returns the embedded vectors.
func LoadGolden() ([]Golden, error) {
	var g []Golden
	if err := json.Unmarshal(goldenJSON, &g); err != nil {
		return nil, fmt.Errorf("payload golden.json: %w", err)
	}
	return g, nil
}

// CheckGolden regenerates every embedded vector and reports the first
// mismatch. It needs no server; `ceiling load --self-test` runs it.
func CheckGolden() (checked int, err error) {
	vs, err := LoadGolden()
	if err != nil {
		return 0, err
	}
	if len(vs) == 0 {
		return 0, fmt.Errorf("payload golden.json: no vectors")
	}
	for _, want := range vs {
		got, err := ComputeGolden(Golden{Mode: want.Mode, Seed: want.Seed, Size: want.Size, Count: want.Count})
		if err != nil {
			return checked, fmt.Errorf("golden %s seed %d size %d: %w", want.Mode, want.Seed, want.Size, err)
		}
		if got != want {
			return checked, fmt.Errorf("golden %s seed %d size %d count %d: pool sha256 %s, want %s (first value %s, want %s)",
				want.Mode, want.Seed, want.Size, want.Count, got.PoolSHA256, want.PoolSHA256, got.FirstHex, want.FirstHex)
		}
		checked++
	}
	return checked, nil
}

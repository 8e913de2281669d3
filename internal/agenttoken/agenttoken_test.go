package agenttoken

import (
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// EstimateBits: a token that repeats itself or draws on few characters
// shows little entropy, random ones their size; Check refuses below
// MinBits, naming where the token came from.
func TestEstimateBits(t *testing.T) {
	tests := []struct {
		token string
		bits  float64 // expected, ±0.5
	}{
		{"aaaaaaaaaaaaaaaa", 2 * 4},                                      // the token: a hex letter, then one run
		{strings.Repeat("z", 200), 2 * math.Log2(26)},                    // length is no help
		{strings.Repeat("xy", 40), 3 * math.Log2(26)},                    // x, y, then one run
		{strings.Repeat("password1234", 4), 13 * math.Log2(36)},          // a phrase repeated
		{"0123456789012345678901234567890123456789", 11 * math.Log2(10)}, // digits, repeated
		{"0123456789abcdef", 16 * 4},                                     // hex: 4 bits a character
		{"Sx9/q+Z&w<\"e\">\\ é=1 ?end", 24 * math.Log2(95)},              // printable and beyond
	}
	for _, tt := range tests {
		if got := EstimateBits(tt.token); math.Abs(got-tt.bits) > 0.5 {
			t.Errorf("EstimateBits(%.20q) = %.1f, want %.1f", tt.token, got, tt.bits)
		}
	}
	if _, err := Check("AGENTS_TOKEN", "aaaaaaaaaaaaaaaa"); err == nil || !strings.Contains(err.Error(), "AGENTS_TOKEN: the token shows about 8 bits of entropy, want at least 128") {
		t.Errorf("Check(aaaa…): %v", err)
	}
	if _, err := Check("f", "short"); err == nil || !strings.Contains(err.Error(), "f: the token is 5 bytes, want at least 16") {
		t.Errorf("Check(short): %v", err)
	}
	// The tokens the docs tell users to make, and New's, pass: 32 random
	// bytes in base64 (std and URL-safe) and in hex.
	for range 200 {
		tok := New()
		if _, err := Check("new", tok); err != nil || len(tok) != 43 {
			t.Fatalf("New() = %d bytes: %v", len(tok), err)
		}
	}
	if _, err := Check("hex", hex.EncodeToString([]byte(New()[:32]))); err != nil {
		t.Errorf("64 hex characters: %v", err)
	}
}

// TestEstimateIsCapped is issue 52's fifth bound: a 256 KiB token cost
// a minute of CPU in the quadratic search for repeats. The estimate
// reads MaxEstimated characters, so a 64 KiB random token scores as its
// head does (on ba59874 it scored its whole length, after seconds).
func TestEstimateIsCapped(t *testing.T) {
	r := rand.New(rand.NewPCG(52, 2))
	b := make([]byte, 64<<10)
	for i := range b {
		b[i] = byte(' ' + r.IntN(95))
	}
	big := string(b)
	if got, head := EstimateBits(big), EstimateBits(big[:MaxEstimated]); got != head {
		t.Errorf("a %d-byte token scored %.0f bits, its first %d characters %.0f: the estimate read past its cap", len(big), got, MaxEstimated, head)
	}
}

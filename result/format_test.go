package result

import (
	"testing"
)

func TestFormat(t *testing.T) {
	rates := map[float64]string{0: "0", 999.4: "999", 1000: "1,000", 1234567.5: "1,234,568", -1234: "-1,234", -123: "-123"}
	for v, want := range rates {
		if got := FormatRate(v); got != want {
			t.Errorf("FormatRate(%v) = %q, want %q", v, got, want)
		}
	}
	lats := map[int64]string{0: "-", -5: "-", 999: "1us", 12_400: "12us", 1_800_000: "1.80ms", 2_500_000_000: "2.50s"}
	for ns, want := range lats {
		if got := FormatLatency(ns); got != want {
			t.Errorf("FormatLatency(%d) = %q, want %q", ns, got, want)
		}
	}
}

// Wrap keeps short lines, breaks a long one at its last space within the
// width with the spacing of what it keeps, indents the rest two more,
// and leaves a word longer than the width whole.
func TestWrap(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"short\n", "short\n"},
		{"aaa  bbb ccc ddd\n", "aaa  bbb\n  ccc ddd\n"},
		{"  x   yy zz\n", "  x   yy\n    zz\n"},
		{"abcdefghijklmn\n", "abcdefghijklmn\n"},
		{"a abcdefghijklmn b", "a\n  abcdefghijklmn\n  b"},
		{"ab, p = 0.008\n", "ab,\n  p = 0.008\n"}, // a relation stays whole
	} {
		if got := Wrap(c.in, 9); got != c.want {
			t.Errorf("Wrap(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

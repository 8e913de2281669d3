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

package load

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHistogramMergeEqualsOneHistogram(t *testing.T) {
	all := NewHistogram()
	parts := []*Histogram{NewHistogram(), NewHistogram(), NewHistogram()}
	for i := int64(1); i <= 30000; i++ {
		v := i * 977 % 5_000_000
		all.Record(v)
		parts[i%3].Record(v)
	}
	merged := NewHistogram()
	for _, p := range parts {
		merged.Merge(p)
	}
	if diff := cmp.Diff(all.Latency(), merged.Latency()); diff != "" {
		t.Fatalf("merged differs from single (-single +merged):\n%s", diff)
	}
}

func TestRecordNEqualsRecordNTimes(t *testing.T) {
	one, many := NewHistogram(), NewHistogram()
	for i, v := range []int64{0, 1, 999, 1000, 123_456, 5_000_000_000, -3, histMaxNs + 1, 42} {
		n := int64(i%4 + 1)
		for range n {
			one.Record(v)
		}
		many.RecordN(v, n)
	}
	many.RecordN(7, 0) // nothing
	if diff := cmp.Diff(one.Latency(), many.Latency()); diff != "" {
		t.Fatalf("RecordN differs from Record n times (-Record +RecordN):\n%s", diff)
	}
	if one.OutOfRange() != many.OutOfRange() || one.Count() != many.Count() {
		t.Fatalf("count %d/%d, out of range %d/%d", one.Count(), many.Count(), one.OutOfRange(), many.OutOfRange())
	}
	if a, b := one.h.Distribution(), many.h.Distribution(); !cmp.Equal(a, b) {
		t.Fatal("RecordN's buckets differ from Record's")
	}
}

func TestHistogramEmptyAndOutOfRange(t *testing.T) {
	h := NewHistogram()
	if got := h.Latency(); got != (Latency{}) {
		t.Fatalf("empty histogram latency = %+v, want zero", got)
	}
	h.Record(-5)
	h.Record(histMaxNs + 1)
	h.Record(1000)
	if h.OutOfRange() != 2 || h.Count() != 1 {
		t.Fatalf("outOfRange=%d count=%d, want 2 and 1", h.OutOfRange(), h.Count())
	}
	o := NewHistogram()
	o.Merge(h)
	if o.OutOfRange() != 2 {
		t.Fatalf("merge lost out-of-range count: %d", o.OutOfRange())
	}
}

func TestHistogramQuantileNeverAboveMax(t *testing.T) {
	h := NewHistogram()
	for i := 0; i < 10; i++ {
		h.Record(1_234_567)
	}
	l := h.Latency()
	want := Latency{Count: 10, Min: 1_234_567, Mean: l.Mean, P50: 1_234_567, P90: 1_234_567, P99: 1_234_567, P999: 1_234_567, Max: 1_234_567}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestCheckHistogramDetectsWrongReference(t *testing.T) {
	// The self-test must be able to fail: a histogram fed other values than
	// the reference would not match it.
	vals := []int64{1000, 2000, 3000, 4000}
	if err := checkHistogram("ok", vals); err != nil {
		t.Fatal(err)
	}
	h := NewHistogram()
	for _, v := range vals {
		h.Record(v * 2)
	}
	if h.Quantile(50) == 2000 {
		t.Fatal("doubled values gave the same median")
	}
}

func TestSelfTest(t *testing.T) {
	var out bytes.Buffer
	if err := SelfTest(&out); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "ok  "); got != 4 {
		t.Fatalf("self-test printed %d ok lines, want 4:\n%s", got, out.String())
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	h := NewHistogram()
	v := int64(1)
	if a := testing.AllocsPerRun(1000, func() { h.Record(v); v += 1234 }); a != 0 {
		t.Fatalf("Record allocates %v per call", a)
	}
}

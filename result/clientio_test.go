package result

import (
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/wire"
)

func TestClientIO(t *testing.T) {
	pt := func(engine, io string) Point {
		return Point{Generator: wire.GeneratorStats{Engine: engine, IOPattern: io}}
	}
	for _, tc := range []struct {
		name  string
		curve []Point
		want  string
	}{
		{"none reported", []Point{pt("", ""), {}}, ""},
		{"one pattern", []Point{pt("loop", "batch-wake"), pt("loop", "batch-wake")}, "loop, batch-wake"},
		{"a failed point adds nothing", []Point{{}, pt("loop", "eager")}, "loop, eager"},
		{"engine only", []Point{pt("nats.go", "")}, "nats.go"},
		{"disagreeing points listed apart", []Point{pt("loop", "batch-wake"), pt("goroutines", "batch-wake"), pt("loop", "batch-wake")},
			"loop, batch-wake; goroutines, batch-wake"},
	} {
		if got := ClientIO(tc.curve); got != tc.want {
			t.Errorf("%s: ClientIO = %q, want %q", tc.name, got, tc.want)
		}
	}
	r := &Result{Curve: []Point{pt("node-ws", "eager")}, Warnings: []string{}}
	r.Summarize()
	if r.Meta.ClientIO != "node-ws, eager" {
		t.Errorf("Summarize left meta.client_io %q, want %q", r.Meta.ClientIO, "node-ws, eager")
	}
}

func TestHeadlineNamesClientIO(t *testing.T) {
	r := &Result{Warnings: []string{}}
	r.Meta.ClientIO = "loop, batch-wake"
	var b strings.Builder
	writeHeadline(&b, r)
	if !strings.Contains(b.String(), "client pattern: loop, batch-wake") {
		t.Errorf("the headline does not name the client pattern:\n%s", b.String())
	}
	r.Meta.ClientIO = ""
	b.Reset()
	writeHeadline(&b, r)
	if strings.Contains(b.String(), "client pattern") {
		t.Errorf("a run without a reported pattern names one:\n%s", b.String())
	}
}

package profdiff

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update to accept):\n%s", path, diff)
	}
}

// TestParsePerfScriptGolden: real samples of refserver (kernel frames,
// Go frames, the vDSO), a Node JIT frame from a perf map, a C++ symbol
// with spaces and parentheses, a comm with a space, a stripped object, a
// name holding the fold's separator and markup, and a header without a
// period, folded as the golden file says.
func TestParsePerfScriptGolden(t *testing.T) {
	p := samplePerf(t)
	var b bytes.Buffer
	if err := WriteFolded(&b, p); err != nil {
		t.Fatal(err)
	}
	golden(t, "sample.folded", b.Bytes())
	// 4 refserver samples, node, Web Content, stripped, weird, noperiod.
	if p.Samples != 9 {
		t.Errorf("samples %d, want 9", p.Samples)
	}
	if want := int64(8 * 250000); p.Ns != want {
		t.Errorf("ns %d, want %d (the last sample has no period)", p.Ns, want)
	}
	// Unsymbolised: the libc leaf of Web Content and the stripped one.
	if p.Unsymbolised != 2 {
		t.Errorf("unsymbolised %d, want 2", p.Unsymbolised)
	}
	for _, want := range []string{
		"[perf-4242.map];LazyCompile:*onMessage /srv/app/server.js:12",
		"main;std::vector<int, std::allocator<int> >::push_back(int const&);[libc.so.6]",
		"[unknown];[stripped]",
		`a:b<script>&"x"`,
		"github.com/ceiling-bench/ceiling/refserver.spin;time.Since;time.runtimeNano;__vdso_clock_gettime",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("folded stacks hold no %q", want)
		}
	}
}

// samplePerf is testdata/sample.perf, parsed.
func samplePerf(t *testing.T) *Profile {
	t.Helper()
	f, err := os.Open("testdata/sample.perf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ParsePerfScript(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestParsePerfScriptErrors: what is not perf script output is refused,
// naming the line.
func TestParsePerfScriptErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"\t1234 main.f (/bin/x)\n", "line 1: a frame outside any sample"},
		{"srv 1/1 1.0: 100 cpu-clock:\n\tmain.f (/bin/x)\n", "line 2: not a frame"},
		{"just some words\n", "line 1: not a sample header"},
		{"srv 1/1 1.0: -5 cpu-clock:\n", "negative period"},
	} {
		_, err := ParsePerfScript(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

// TestFoldedRoundTrip: what WriteFolded wrote, ParseFolded reads back
// with the same stacks, samples and unsymbolised samples.
func TestFoldedRoundTrip(t *testing.T) {
	checkRoundTrip(t, samplePerf(t))
	for _, bad := range []string{"a;b\n", "a;b x\n", "a;;b 3\n", "a -1\n"} {
		if _, err := ParseFolded(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseFolded(%q) took it", bad)
		}
	}
}

func checkRoundTrip(t *testing.T, p *Profile) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteFolded(&b, p); err != nil {
		t.Fatal(err)
	}
	q, err := ParseFolded(&b)
	if err != nil {
		t.Fatalf("ParseFolded of WriteFolded: %v\n%s", err, b.String())
	}
	// A symbol that is itself bracketed reads back as an object name:
	// unsymbolised, never fewer.
	if q.Samples != p.Samples || q.Unsymbolised < p.Unsymbolised || len(q.Stacks) != len(p.Stacks) {
		t.Fatalf("round trip: samples %d/%d, unsymbolised %d/%d, stacks %d/%d", q.Samples, p.Samples, q.Unsymbolised, p.Unsymbolised, len(q.Stacks), len(p.Stacks))
	}
	for k, w := range p.Stacks {
		if q.Stacks[k].Samples != w.Samples {
			t.Fatalf("round trip: %q has %d samples, want %d", k, q.Stacks[k].Samples, w.Samples)
		}
	}
}

// FuzzParsePerfScript: whatever the input, the parser either refuses it
// or gives a profile whose sums hold, whose every frame is a non-empty
// name without the separator or a control character, and whose folded
// form reads back the same.
func FuzzParsePerfScript(f *testing.F) {
	seed, err := os.ReadFile("testdata/sample.perf")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(seed))
	f.Add("srv 1/1 1.0: 100 cpu-clock:\n\t1 main.f+0x1 (/bin/x)\n\t2 [unknown] ([unknown])\n")
	f.Add("a b c 1.5: 7 ev:\n\tff (x)\n\n\n#c\n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParsePerfScript(strings.NewReader(in))
		if err != nil {
			return
		}
		var n, ns int64
		for k, w := range p.Stacks {
			n += w.Samples
			ns += w.Ns
			if w.Samples <= 0 || w.Ns < 0 {
				t.Fatalf("stack %q has weight %+v", k, w)
			}
			for _, fr := range strings.Split(k, ";") {
				if strings.TrimSpace(fr) == "" {
					t.Fatalf("stack %q has an empty frame", k)
				}
				if strings.ContainsFunc(fr, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
					t.Fatalf("frame %q holds a control character", fr)
				}
			}
		}
		if n != p.Samples || ns != p.Ns || p.Unsymbolised > p.Samples {
			t.Fatalf("sums: samples %d vs %d, ns %d vs %d, unsymbolised %d", n, p.Samples, ns, p.Ns, p.Unsymbolised)
		}
		if utf8.ValidString(in) {
			checkRoundTrip(t, p)
		}
	})
}

package publish

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"echo, batch 10, 256 B", "echo, batch 10, 256 B"},
		{"a|b", `a\|b`},
		{"<script>x</script>", `&lt;script&gt;x&lt;/script&gt;`},
		{"</details><details open>", `&lt;/details&gt;&lt;details open&gt;`},
		{"[x](https://evil.example)", `\[x\]\(https&#58;//evil\.example\)`},
		{"![i](u)", `\!\[i\]\(u\)`},
		{"@octocat #12", "@\u2060octocat #\u206012"},
		{"line one\nline two\r\n\tthree", "line one line two three"},
		{"**bold** `tick` _it_", "\\*\\*bold\\*\\* \\`tick\\` \\_it\\_"},
		{"<!-- ceiling:comment -->", `&lt;\!\-\- ceiling&#58;comment \-\-&gt;`},
		{"feat/x\u202e\u200b", `feat/x`},
		{"www.evil.example", `www\.evil\.example`},
		{"a & b \"q\"", "a &amp; b &quot;q&quot;"},
	}
	for _, tt := range tests {
		if got := text(tt.in); got != tt.want {
			t.Errorf("text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestTextBounded(t *testing.T) {
	t.Parallel()
	got := text(strings.Repeat("x", 1000))
	if n := len([]rune(got)); n != maxText+1 || !strings.HasSuffix(got, "…") {
		t.Errorf("text of 1000 runes has %d runes, want %d ending in …", n, maxText+1)
	}
}

func TestChartLabel(t *testing.T) {
	t.Parallel()
	if got, want := chartLabel(`batch 10 "]; click x call evil()`), "batch 10  click x call evil()"; got != want {
		t.Errorf("chartLabel = %q, want %q", got, want)
	}
}

package publish

import (
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	t.Parallel()
	md, err := Summary(mustRead(t, "two_arm_real.json"), "ceiling sweep: <b>x</b>")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### ceiling sweep&#58; &lt;b&gt;x&lt;/b&gt;\n", "```mermaid", "cannot conclude", HiddenMarker(SummaryMarker)} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	// A single-arm run alone, as on a push to main: no head, no missing
	// baseline.
	md, err = Summary(mustRead(t, "head_same.json"), "ceiling sweep")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one run, nothing compared; headline ", "| batch | ceiling | p99 |", "Noise floor of the run ", `line "run"`, "Run at "} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in the single-arm summary:\n%s", want, md)
		}
	}
	for _, bad := range []string{"head only", "head ceiling", "no baseline", "Head ", `line "head"`} {
		if strings.Contains(md, bad) {
			t.Errorf("the single-arm summary says %q, outside a pull request:\n%s", bad, md)
		}
	}
	md, err = Summary(mustRead(t, "head_hostile.json"), "h")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md, "<script>") {
		t.Errorf("hostile text unescaped in the summary:\n%s", md)
	}
}

func TestSiteLinks(t *testing.T) {
	t.Parallel()
	base, head := mustRead(t, "base.json"), mustRead(t, "head_mixed.json")
	c, err := Compare(base, head, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	site, err := CheckSiteURL("https://o.github.io/ceiling")
	if err != nil {
		t.Fatal(err)
	}
	md := Render(c, RenderOptions{SiteURL: site})
	want := "Results site: [baseline run 111111111111](https://o.github.io/ceiling/run-111111111111-ceiling-load-20261129T101600Z.html) · [trend over commits](https://o.github.io/ceiling/)."
	if !strings.Contains(md, want) {
		t.Errorf("no %q in\n%s", want, md)
	}
	if strings.Contains(Render(c, RenderOptions{}), "Results site") {
		t.Error("a link without --site-url")
	}
	// Head only: no baseline page, the trend only.
	c, err = Compare(nil, head, CompareOptions{BaseMissing: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if md := Render(c, RenderOptions{SiteURL: site}); !strings.Contains(md, "Results site: [trend over commits](https://o.github.io/ceiling/).") || strings.Contains(md, "baseline run") {
		t.Errorf("head-only links:\n%s", md)
	}
}

func TestCheckSiteURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://o.github.io/r":   "https://o.github.io/r/",
		"https://o.github.io/r//": "https://o.github.io/r/",
		"http://127.0.0.1:8080":   "http://127.0.0.1:8080/",
	} {
		if got, err := CheckSiteURL(in); err != nil || got != want {
			t.Errorf("CheckSiteURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "o.github.io/r", "javascript:alert(1)", "https://u:p@h/", "https://h/?q=1", "https://h/#x", "https://h/a)b", "https://h/a b", "https://h/<x>", "file:///etc"} {
		if _, err := CheckSiteURL(bad); err == nil {
			t.Errorf("CheckSiteURL(%q) accepted", bad)
		}
	}
}

func TestSitePageIsAFileName(t *testing.T) {
	t.Parallel()
	r := mustRead(t, "head_hostile.json")
	r.Meta.GitRef = "../../etc/passwd"
	r.Meta.Generator = "a/b\\c <x>"
	p := SitePage(r)
	if strings.ContainsAny(p, "/\\<> ") || strings.HasPrefix(p, ".") || !strings.HasSuffix(p, ".html") {
		t.Errorf("SitePage = %q", p)
	}
}

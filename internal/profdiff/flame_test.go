package profdiff

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

func folded(t *testing.T, text string) *Profile {
	t.Helper()
	p, err := ParseFolded(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFlameGraphGolden: a small differential graph, as the golden file
// has it: widths the mean of the arms, spin new and red, the shrunk
// frame blue, the unchanged one grey.
func TestFlameGraphGolden(t *testing.T) {
	svg, err := FlameGraph(FlameInput{
		Base:      folded(t, "main;serve;write 600\nmain;serve;parse 300\nmain;gc 100\n"),
		Head:      folded(t, "main;serve;write 600\nmain;serve;parse 150\nmain;serve;spin 500\nmain;gc 100\n"),
		BaseScale: 1, HeadScale: 1,
		Title: "refserver --spin against refserver",
	})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "flame.golden.svg", svg)
	s := string(svg)
	for _, want := range []string{`fill="rgb(255,0,0)" stroke`, `>spin</text>`, `fill="rgb(`, `fill="#e8e8e8"`} {
		if !strings.Contains(s, want) {
			t.Errorf("the SVG holds no %q", want)
		}
	}
}

// TestFlameGraphIsInert: names from a pull request's code, markup and
// all, are text in the SVG: it parses as XML, holds no script, no
// foreignObject, no event attribute and no link, and every name is in it
// escaped.
func TestFlameGraphIsInert(t *testing.T) {
	hostile := []string{
		`<script>alert(1)</script>`,
		`x" onload="alert(1)`,
		`</text><a href="javascript:alert(1)">y</a>`,
		"ctl\x01\x7fchars",
		`&amp;&lt;`,
		`]]><foreignObject>`,
	}
	var b strings.Builder
	for i, h := range hostile {
		b.WriteString("main;" + clean(h) + " " + strings.Repeat("1", 1) + "\n")
		_ = i
	}
	p := folded(t, b.String())
	svg, err := FlameGraph(FlameInput{Base: p, Head: p, BaseScale: 1, HeadScale: 2, Title: `<b>title</b>`})
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	titles := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			switch e.Name.Local {
			case "svg", "g", "rect", "text", "title":
			default:
				t.Errorf("element <%s> in the SVG", e.Name.Local)
			}
			for _, a := range e.Attr {
				if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") || strings.Contains(a.Name.Local, "href") {
					t.Errorf("attribute %s=%q", a.Name.Local, a.Value)
				}
			}
		case xml.CharData:
			titles += string(e)
		}
	}
	for _, h := range hostile {
		if want := clean(h); !strings.Contains(titles, want) {
			t.Errorf("the SVG's text lost %q", want)
		}
	}
	if strings.Contains(string(svg), "<script") || strings.Contains(string(svg), "<a ") {
		t.Error("markup from a name reached the SVG unescaped")
	}
}

// TestFlameGraphRecorded: the recorded spin blocks draw, spin red, and
// the graph keeps its fixed width and 12 px text at any size of page.
func TestFlameGraphRecorded(t *testing.T) {
	base, head := NewProfile(), NewProfile()
	var bm, hm float64
	for _, b := range recorded(t, "a1", "a2", "b1") {
		base.Merge(b.Profile)
		bm += b.Messages
	}
	for _, b := range recorded(t, "s1", "s2", "s3") {
		head.Merge(b.Profile)
		hm += b.Messages
	}
	svg, err := FlameGraph(FlameInput{Base: base, Head: head, BaseScale: 250000 / bm, HeadScale: 250000 / hm})
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	if !strings.Contains(s, `width="1200"`) || !strings.Contains(s, `font-size="12"`) {
		t.Error("the SVG lost its fixed width or font size")
	}
	i := strings.Index(s, "refserver.spin&#xA;")
	if i < 0 {
		t.Fatal("no spin frame")
	}
	if j := strings.Index(s[i:], `fill="rgb(255,`); j < 0 || j > 300 {
		t.Errorf("spin is not red: %.300s", s[i:])
	}
	if _, err := FlameGraph(FlameInput{Base: base, Head: head}); err == nil {
		t.Error("drew without the arms' scales")
	}
}

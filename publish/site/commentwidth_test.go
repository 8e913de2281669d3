package site

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// GitHub's comment column is 748 px of content on a pull request's
// conversation page (at its widest layout); a wider table scrolls
// sideways, and its last columns are out of sight.
const commentColumn = 748

// githubCSS is the part of GitHub's markdown CSS (primer's
// markdown-body) that sets a table's width: the font, the cell padding
// and borders, and tables as scrolling blocks no wider than the column.
const githubCSS = `
body { margin: 0 }
.markdown-body { width: 748px; font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif, "Apple Color Emoji", "Segoe UI Emoji"; font-size: 14px; line-height: 1.5; }
table { display: block; width: max-content; max-width: 100%; overflow: auto; border-spacing: 0; border-collapse: collapse; margin: 0 0 16px; }
th { font-weight: 600 }
th, td { padding: 6px 13px; border: 1px solid #d0d7de }
code { padding: .2em .4em; font-size: 85%; font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace }
`

// TestCommentTablesFitGitHubColumn lays out every table of every golden
// comment (publish/testdata/*.golden.md) with GitHub's markdown CSS in
// Chromium, and checks that none is wider than the comment column: the
// table of a two-arm comparison once needed 772 px, and p99's change was
// cut off (issue 22).
func TestCommentTablesFitGitHubColumn(t *testing.T) {
	ctx := browser(t)
	goldens, err := filepath.Glob(filepath.Join("..", "testdata", "*.golden.md"))
	if err != nil || len(goldens) < 5 {
		t.Fatalf("golden comments: %v, %v", goldens, err)
	}
	var page strings.Builder
	fmt.Fprintf(&page, "<!doctype html><meta charset=utf-8><style>%s</style><div class=markdown-body>\n", githubCSS)
	tables := 0
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		for i, tb := range markdownTables(string(b)) {
			fmt.Fprintf(&page, "<table data-name=\"%s#%d\">%s</table>\n", html.EscapeString(filepath.Base(g)), i+1, tb)
			tables++
		}
	}
	page.WriteString("</div>")
	if tables < 10 {
		t.Fatalf("only %d tables in %d golden comments", tables, len(goldens))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page.String())
	}))
	defer srv.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	type width struct {
		Name   string  `json:"name"`
		Scroll float64 `json:"scroll"`
		Client float64 `json:"client"`
	}
	widths, err := chromedp.Run(ctx, chromedp.Evaluate[[]width](`[...document.querySelectorAll('table')].map(t => ({name: t.dataset.name, scroll: t.scrollWidth, client: t.clientWidth}))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(widths) != tables {
		t.Fatalf("%d tables laid out, want %d", len(widths), tables)
	}
	for _, w := range widths {
		t.Logf("%s: %.0f px", w.Name, w.Scroll)
		if w.Scroll > commentColumn || w.Scroll > w.Client+1 {
			t.Errorf("%s needs %.0f px, wider than GitHub's %d px comment column: it scrolls sideways", w.Name, w.Scroll, commentColumn)
		}
	}
}

var (
	boldRE = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	codeRE = regexp.MustCompile("`([^`]+)`")
	escRE  = regexp.MustCompile(`\\([!-/:-@\[-` + "`" + `{-~])`)
)

// markdownTables renders the pipe tables of md as HTML table contents,
// with the inline markup GitHub would apply to their cells (bold, code,
// backslash escapes; HTML entities and tags pass through).
func markdownTables(md string) []string {
	var out []string
	lines := strings.Split(md, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|") || !strings.HasPrefix(lines[i+1], "|") || !strings.Contains(lines[i+1], "---") {
			continue
		}
		var b strings.Builder
		b.WriteString("<tr>")
		for _, c := range tableCells(lines[i]) {
			b.WriteString("<th>" + inline(c) + "</th>")
		}
		b.WriteString("</tr>")
		j := i + 2
		for ; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
			b.WriteString("<tr>")
			for _, c := range tableCells(lines[j]) {
				b.WriteString("<td>" + inline(c) + "</td>")
			}
			b.WriteString("</tr>")
		}
		out = append(out, b.String())
		i = j
	}
	return out
}

// tableCells splits a table row at its unescaped pipes.
func tableCells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(strings.TrimSuffix(row, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		if row[i] == '\\' && i+1 < len(row) && row[i+1] == '|' {
			cur.WriteString(`\|`)
			i++
			continue
		}
		if row[i] == '|' {
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteByte(row[i])
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

func inline(cell string) string {
	cell = codeRE.ReplaceAllString(cell, "<code>$1</code>")
	cell = boldRE.ReplaceAllString(cell, "<strong>$1</strong>")
	return escRE.ReplaceAllString(cell, "$1")
}

package publish

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMermaidRendersCharts renders every chart of every golden comment
// with the real mermaid library (@mermaid-js/mermaid-cli, pinned in
// .ci/mermaid/, driving the system's chromium), in GitHub's light and dark
// themes, and checks each SVG: every named series is in the legend, every
// line is stroked and every lower-bound bar filled in the colour the init
// directive asked for, and the y-axis starts at zero. A chart mermaid
// cannot parse fails here, not on a pull request.
//
// Without a browser or npm it skips, saying why, unless CI is set: then it
// fails, since .ci/run installs both.
func TestMermaidRendersCharts(t *testing.T) {
	mmdc, config := installMermaid(t)

	var src strings.Builder
	type chart struct{ name, code string }
	var charts []chart
	for _, tc := range renderCases(t) {
		for _, code := range mermaidBlocks(tc.md) {
			charts = append(charts, chart{tc.name, code})
			fmt.Fprintf(&src, "## %s\n\n```mermaid\n%s```\n\n", tc.name, code)
		}
	}
	if len(charts) < 5 {
		t.Fatalf("only %d charts in the golden comments; the cases lost their charts", len(charts))
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "charts.md")
	if err := os.WriteFile(in, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, theme := range []struct{ name, background string }{{"default", "white"}, {"dark", "#0d1117"}} {
		out := filepath.Join(dir, theme.name+".md")
		cmd := exec.Command(mmdc, "--quiet", "-p", config, "-t", theme.name, "-b", theme.background, "-i", in, "-o", out)
		// TMPDIR: the browser's scratch is removed with the test's dir.
		cmd.Env = append(os.Environ(), "PUPPETEER_SKIP_DOWNLOAD=1", "TMPDIR="+t.TempDir())
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mmdc (%s theme): %v\n%s", theme.name, err, b)
		}
		for i, ch := range charts {
			svgPath := filepath.Join(dir, fmt.Sprintf("%s-%d.svg", theme.name, i+1))
			svg, err := os.ReadFile(svgPath)
			if err != nil {
				t.Fatalf("%s chart of %s: %v", theme.name, ch.name, err)
			}
			checkSVG(t, fmt.Sprintf("%s (%s theme, %s)", ch.name, theme.name, filepath.Base(svgPath)), ch.code, string(svg))
		}
	}
}

var (
	seriesRE  = regexp.MustCompile(`(?m)^\s+(line|bar) "([^"]*)" \[`)
	paletteRE = regexp.MustCompile(`"plotColorPalette": "([^"]*)"`)
	yAxisRE   = regexp.MustCompile(`(?m)^\s+y-axis "[^"]*" 0 --> \d+$`)
)

// checkSVG checks one rendered chart against its source.
func checkSVG(t *testing.T, what, code, svg string) {
	t.Helper()
	series := seriesRE.FindAllStringSubmatch(code, -1)
	pm := paletteRE.FindStringSubmatch(code)
	if pm == nil || len(series) == 0 {
		t.Errorf("%s: the source has no palette or no named series:\n%s", what, code)
		return
	}
	colors := strings.Split(pm[1], ", ")
	if len(colors) != len(series) {
		t.Errorf("%s: %d colours for %d series", what, len(colors), len(series))
		return
	}
	if !yAxisRE.MatchString(code) {
		t.Errorf("%s: the y-axis does not start at zero:\n%s", what, code)
	}
	var names []string
	for i, s := range series {
		kind, name, color := s[1], s[2], colors[i]
		names = append(names, name)
		if !regexp.MustCompile(`<text[^>]*>` + regexp.QuoteMeta(name) + `</text>`).MatchString(svg) {
			t.Errorf("%s: no legend entry %q in the SVG", what, name)
		}
		attr := `stroke="` + color + `"`
		if kind == "bar" {
			attr = `fill="` + color + `"`
		}
		if !strings.Contains(svg, attr) {
			t.Errorf("%s: %s %q is not drawn with %s", what, kind, name, attr)
		}
	}
	if strings.Contains(code, `line "base"`) && !strings.Contains(code, `line "head"`) {
		t.Errorf("%s: a base line without a head line: %v", what, names)
	}
	if !regexp.MustCompile(`<text[^>]*>0</text>`).MatchString(svg) {
		t.Errorf("%s: no 0 tick on the y-axis", what)
	}
}

// mermaidBlocks returns the code of every ```mermaid block in md.
func mermaidBlocks(md string) []string {
	var out []string
	for _, part := range strings.Split(md, "```mermaid\n")[1:] {
		code, _, ok := strings.Cut(part, "```")
		if ok {
			out = append(out, code)
		}
	}
	return out
}

// installMermaid runs .ci/mermaid.sh (the same install .ci/run does) and
// returns the mmdc binary and the puppeteer config it wrote.
func installMermaid(t *testing.T) (mmdc, config string) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", ".ci", "mermaid.sh"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(script).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		why := strings.TrimSpace(string(ee.Stderr))
		if inCI() {
			t.Fatalf("CI is set but the chart renderer cannot run: %s", why)
		}
		t.Skipf("no browser or npm here, so the charts are not rendered (CI fails instead): %s", why)
	}
	if err != nil {
		stderr := ""
		if errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s: %v\n%s", script, err, stderr)
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 {
		t.Fatalf("%s printed %q, want the mmdc path and the puppeteer config", script, out)
	}
	return lines[0], lines[1]
}

func inCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

package main

import (
	"bytes"
	"html"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/publish/site"
	"github.com/ceiling-bench/ceiling/result"
)

// TestOneVocabulary is issue 51's verdict phrase table and p-value
// formatter: for a slower, a within-noise and a cannot-conclude
// comparison, the sweep's table, its last line, `ceiling compare`'s
// line, the pull request's comment and the run's page on the site each
// say the headline's verdict in result.Phrase's words and its p as
// result.FormatP writes it, and none shows a machine token (within_noise
// once ended `ceiling compare` under a line that said "no significant
// change"; the site wrote "p = 0.000" where the terminal wrote
// "p = <0.001").
func TestOneVocabulary(t *testing.T) {
	var tokens []string
	for token := range result.Phrases() {
		if strings.Contains(token, "_") {
			tokens = append(tokens, token)
		}
	}
	for _, name := range []string{"two_arm_slower.json", "two_arm_same.json", "two_arm_real.json"} {
		data, err := os.ReadFile(publishFixtures + name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := publish.Read(data, name)
		if err != nil {
			t.Fatal(err)
		}
		h := r.Comparison.Headline
		surfaces := map[string]string{}
		var table bytes.Buffer
		if err := result.WriteTable(&table, r); err != nil {
			t.Fatal(err)
		}
		surfaces["the sweep's table"] = table.String()
		surfaces["the sweep's last line"] = result.OutcomeLine(r.Comparison)
		surfaces["ceiling compare"] = compareLine(h, "HEAD@5d6e7f8", "main@1a2b3c4", "out/compare.json")
		c, err := publish.Compare(nil, r, publish.CompareOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The comment's spaces do not break, and its text is escaped.
		surfaces["the comment"] = strings.NewReplacer("\u00a0", " ", `\`, "").Replace(publish.Render(c, publish.RenderOptions{}))
		files, err := site.Build([]site.Run{{Name: name, Result: r}}, site.Options{Now: time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		surfaces["the run's page"] = strings.ReplaceAll(html.UnescapeString(string(files[publish.SitePage(r)])), "\u00a0", " ")
		surfaces["the site's index"] = html.UnescapeString(string(files[site.IndexFile]))
		for where, text := range surfaces {
			for _, token := range tokens {
				if strings.Contains(text, token) {
					t.Errorf("%s: %s shows the machine token %q", name, where, token)
				}
			}
			if !strings.Contains(text, result.Phrase(h.Verdict)) {
				t.Errorf("%s: %s does not say %q:\n%s", name, where, result.Phrase(h.Verdict), text)
			}
			if h.PValue != nil && where != "the site's index" && !strings.Contains(text, result.FormatP(h.PValue)) {
				t.Errorf("%s: %s does not write the headline's p as %q", name, where, result.FormatP(h.PValue))
			}
			for _, bad := range []string{"p = 0.000", "p = <", "p=<"} {
				if strings.Contains(text, bad) {
					t.Errorf("%s: %s writes %q", name, where, bad)
				}
			}
		}
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocsPinNoMissingTag: what a user reads to get started pins nothing
// that does not exist. A `ceiling-bench/ceiling@vN` or a `go install
// …/cmd/ceiling@vN` in the README, the docs, action.yml or an example's
// README must name a tag of this repository (the README once promised
// the action at @v1 before any tag existed; until the first release the
// pin is a commit). Placeholders (vX.Y.Z) are not versions.
func TestDocsPinNoMissingTag(t *testing.T) {
	root := "../.."
	out, err := exec.Command("git", "-C", root, "tag", "--list", "v*").Output()
	if err != nil {
		t.Skipf("no git repository at %s (%v): the tags cannot be listed", root, err)
	}
	tags := strings.Fields(string(out))
	files := []string{"README.md", "action.yml"}
	for _, glob := range []string{"docs/*.md", "examples/*/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			files = append(files, rel)
		}
	}
	pin := regexp.MustCompile(`(?:ceiling-bench/ceiling|/cmd/ceiling)@(v[0-9][0-9A-Za-z.+-]*)`)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range pin.FindAllStringSubmatch(string(b), -1) {
			v := strings.TrimRight(m[1], ".")
			if !slices.Contains(tags, v) {
				t.Errorf("%s pins %s, and this repository has no tag %s (tags: %v)", f, m[0], v, tags)
			}
		}
	}
}

// TestDocsSayWhichBinary: the README's commands say which ceiling each
// runs: a line run in your own repository runs the `ceiling` on your
// PATH, never `bin/ceiling` (a path that exists only in a clone of
// ceiling), and the README and docs/your-server.md say how to put it on
// your PATH without the module proxy (make install, a release archive),
// not only `go install …@latest`.
func TestDocsSayWhichBinary(t *testing.T) {
	root := "../.."
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "bin/ceiling ") && strings.Contains(line, "your repository") {
			t.Errorf("README: %q runs bin/ceiling in your repository, where there is none", line)
		}
	}
	if !strings.Contains(string(readme), "make install") {
		t.Error("README does not say how to put ceiling on your PATH (make install)")
	}
	guide, err := os.ReadFile(filepath.Join(root, "docs", "your-server.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"make install", "release archive", "action's own build"} {
		if !strings.Contains(string(guide), want) {
			t.Errorf("docs/your-server.md does not give %q as a way to get ceiling", want)
		}
	}
}

package site

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"

	"github.com/ceiling-bench/ceiling/internal/profdiff"
	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

// maxFolded bounds a folded stacks file the site reads.
const maxFolded = 64 << 20

// profileView is a two-arm run's differential CPU profile on its page
// (comparison.headline.profile_diff): the frames that grew and shrank
// most, and the flame graph, drawn here (never copied: the SVG is the
// site's own, every name escaped) from the folded stacks beside the
// result.
type profileView struct {
	D            *result.ProfileDiff
	Grew, Shrank []result.ProfileFrame
	File         string // the flame graph beside the page; "": none
	NoFile       string // why there is none
}

// profileOf is r's profile view and its flame graph (nil for a run
// without a profile diff), the graph drawn from the folded stacks the
// result names, read from r.Files.
func profileOf(r Run, page string) (*profileView, []byte) {
	c := r.Result.Comparison
	if c == nil || c.Headline.ProfileDiff == nil {
		return nil, nil
	}
	d := c.Headline.ProfileDiff
	v := &profileView{D: d, Grew: d.Listed(result.FrameGrew, 5), Shrank: d.Listed(result.FrameShrank, 5)}
	if d.Reason != "" {
		return v, nil
	}
	svg, err := flameGraph(r, d)
	if err != nil {
		v.NoFile = err.Error()
		return v, nil
	}
	v.File = strings.TrimSuffix(page, ".html") + "-flamegraph.svg" // the page name is a slug already
	return v, svg
}

func flameGraph(r Run, d *result.ProfileDiff) ([]byte, error) {
	if r.Files == nil {
		return nil, fmt.Errorf("the result was not read from a directory holding its folded stacks")
	}
	if d.Base == nil || d.Head == nil || d.Base.Messages <= 0 || d.Head.Messages <= 0 {
		return nil, fmt.Errorf("the profile diff has no message counts to draw per message")
	}
	var arms [2]*profdiff.Profile
	for i, f := range []string{d.Base.FoldedFile, d.Head.FoldedFile} {
		if !publish.LocalFile(f) {
			return nil, fmt.Errorf("%q is not a file beside the result", f)
		}
		if fi, err := fs.Stat(r.Files, f); err != nil {
			return nil, fmt.Errorf("the folded stacks %s: %v", f, err)
		} else if fi.Size() > maxFolded {
			return nil, fmt.Errorf("the folded stacks %s are larger than %d bytes", f, maxFolded)
		}
		b, err := fs.ReadFile(r.Files, f)
		if err != nil {
			return nil, fmt.Errorf("the folded stacks %s: %v", f, err)
		}
		if arms[i], err = profdiff.ParseFolded(bytes.NewReader(b)); err != nil {
			return nil, fmt.Errorf("the folded stacks %s: %v", f, err)
		}
	}
	return profdiff.FlameGraph(profdiff.FlameInput{Base: arms[0], Head: arms[1],
		BaseScale: d.Base.NsPerSample / d.Base.Messages, HeadScale: d.Head.NsPerSample / d.Head.Messages,
		Title: "CPU per message handled, head against base (" + d.Tool + ")"})
}

package publish

import (
	"fmt"
	"math"
	"strings"

	"github.com/ceiling-bench/ceiling/result"
)

// profileTop is how many frames the comment lists each way.
const profileTop = 5

// renderProfile folds the differential CPU profile of the headline away
// (comparison.headline.profile_diff, docs/compare.md "Why is it
// slower"): the 5 frames that grew most beyond their noise and the 5
// that shrank most, per message handled, and where the flame graph is;
// or that no profile was taken and why. Function names come from the
// pull request's code: each goes through text, like any string of a run.
func renderProfile(b *strings.Builder, c *Comparison) {
	if c.Stats == nil || c.Stats.Headline.ProfileDiff == nil {
		return
	}
	d := c.Stats.Headline.ProfileDiff
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	if d.Reason != "" {
		p("<details><summary>CPU profile: none was taken</summary>\n\n")
		p("No differential profile: %s.\n\n", text(d.Reason))
		for _, n := range d.Notes {
			p("- %s\n", text(n))
		}
		p("\n</details>\n\n")
		return
	}
	grew, shrank := d.Listed(result.FrameGrew, profileTop), d.Listed(result.FrameShrank, profileTop)
	p("<details><summary>Why: CPU per message, head against base (%s, %s)</summary>\n\n", text(d.Tool), profiledPoints(d))
	if d.Base != nil && d.Head != nil {
		p("Whole servers: base %s, head %s of CPU per message handled (%s).\n\n",
			nsPerMsg(d.Base.CPUNsPerMessage), nsPerMsg(d.Head.CPUNsPerMessage), nsChange(d.Base.CPUNsPerMessage, d.Head.CPUNsPerMessage))
	}
	table := func(title string, fs []result.ProfileFrame) {
		if len(fs) == 0 {
			p("%s: none beyond the spread of its points.\n\n", title)
			return
		}
		p("%s:\n\n| function | base | head | change |\n|---|--:|--:|--:|\n", title)
		for _, f := range fs {
			p("| %s | %s | %s | %s |\n", text(f.Function), nsPerMsg(f.BaseNs), nsPerMsg(f.HeadNs), nsChange(f.BaseNs, f.HeadNs))
		}
		p("\n")
	}
	table("Grew most", grew)
	table("Shrank most", shrank)
	if d.Tested == 0 {
		p("One profiled point in an arm: no frame was tested against its spread.\n\n")
	}
	p("A frame is listed only when its change is beyond the spread of its points (alpha %s for the whole list); costs are inclusive (wherever the function is on the stack).", fmtAlpha(d.Alpha))
	if d.FlamegraphFile != "" {
		p(" The differential flame graph is %s in the artifact (red grew, blue shrank).", code(d.FlamegraphFile))
	}
	p("\n\n")
	if d.Base != nil && d.Head != nil && d.Base.Unsymbolised+d.Head.Unsymbolised > 0 {
		p("Samples without a symbol: base %d of %d, head %d of %d.\n\n", d.Base.Unsymbolised, d.Base.Samples, d.Head.Unsymbolised, d.Head.Samples)
	}
	for _, n := range d.Notes {
		p("- %s\n", text(n))
	}
	p("</details>\n\n")
}

// profiledPoints is "3 profiled points an arm" (or "2 base, 3 head").
func profiledPoints(d *result.ProfileDiff) string {
	if d.Base == nil || d.Head == nil {
		return "no point"
	}
	nb, nh := len(d.Base.Points), len(d.Head.Points)
	if nb == nh {
		return fmt.Sprintf("%d profiled points an arm", nb)
	}
	return fmt.Sprintf("profiled points: %d base, %d head", nb, nh)
}

// code is a file name as inline code: backticks cannot be escaped inside
// a code span, so a name holding one goes through text instead.
func code(s string) string {
	if strings.ContainsAny(s, "`\n\r") || len(s) > maxText {
		return text(s)
	}
	return "`" + s + "`"
}

// nsPerMsg is a cost per message.
func nsPerMsg(ns float64) string {
	switch {
	case math.IsNaN(ns) || math.IsInf(ns, 0):
		return "n/a"
	case math.Abs(ns) >= 1e6:
		return fmt.Sprintf("%.2f"+nbsp+"ms", ns/1e6)
	case math.Abs(ns) >= 1e3:
		return fmt.Sprintf("%.2f"+nbsp+"µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f"+nbsp+"ns", ns)
}

// nsChange is head against base: "+2.11 µs (+19.6%)", or "new".
func nsChange(base, head float64) string {
	d := nsPerMsg(head - base)
	if head >= base {
		d = "+" + d
	}
	if base > 0 {
		return fmt.Sprintf("%s (%+.1f%%)", d, 100*(head-base)/base)
	}
	return d + " (new)"
}

func fmtAlpha(a float64) string {
	if a <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%g", a)
}

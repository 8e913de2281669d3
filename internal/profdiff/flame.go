package profdiff

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"slices"
	"strings"
)

// FlameInput is what a differential flame graph is drawn from: each
// arm's folded stacks (samples summed over its profiled blocks) and what
// one sample of each costs per message (NsPerSample / Messages of the
// arm), so that both arms are drawn per message handled.
type FlameInput struct {
	Base, Head           *Profile
	BaseScale, HeadScale float64
	Title                string
}

// Layout of the flame graph: a fixed width in CSS pixels, so that a page
// shows it at its own size (scrolled sideways on a narrow screen) and its
// 12 px text never shrinks below legibility.
const (
	FlameWidth  = 1200
	frameHeight = 17
	fontSize    = 12
	charWidth   = 7.3 // of the 12 px monospace font, with room
	margin      = 10
	headerLines = 3
	minFrameW   = 0.5 // px: narrower frames (and what they call) are left out
	maxDepth    = 256
)

// node is one frame in the merged call tree.
type node struct {
	name               string
	base, head         float64 // inclusive, per message
	baseSelf, headSelf float64
	children           map[string]*node
}

func (n *node) child(name string) *node {
	if n.children == nil {
		n.children = map[string]*node{}
	}
	c := n.children[name]
	if c == nil {
		c = &node{name: name}
		n.children[name] = c
	}
	return c
}

// FlameGraph draws in as a static SVG: frames root at the bottom, each
// frame's width the mean of its base and head inclusive cost per message
// (the mean keeps a frame that vanished or appeared, and a parent always
// spans its children), its colour its self change (head - base), red
// where it grew and blue where it shrank, in proportion to the largest
// self change; its title (a tooltip) gives both arms' figures. The SVG
// holds no script, no link and no external reference, and every name is
// escaped.
func FlameGraph(in FlameInput) ([]byte, error) {
	if in.Base == nil || in.Head == nil {
		return nil, fmt.Errorf("a flame graph needs both arms' stacks")
	}
	if !(in.BaseScale > 0) || !(in.HeadScale > 0) || math.IsInf(in.BaseScale+in.HeadScale, 0) {
		return nil, fmt.Errorf("a flame graph needs each arm's cost of a sample per message (got %v and %v)", in.BaseScale, in.HeadScale)
	}
	root := &node{name: "all"}
	add := func(p *Profile, scale float64, head bool) {
		for stack, w := range p.Stacks {
			v := float64(w.Samples) * scale
			n := root
			frames := strings.Split(stack, ";")
			if len(frames) > maxDepth {
				frames = frames[:maxDepth]
			}
			for i, f := range frames {
				n = n.child(f)
				if head {
					n.head += v
				} else {
					n.base += v
				}
				if i == len(frames)-1 {
					if head {
						n.headSelf += v
					} else {
						n.baseSelf += v
					}
				}
			}
			if head {
				root.head += v
			} else {
				root.base += v
			}
		}
	}
	add(in.Base, in.BaseScale, false)
	add(in.Head, in.HeadScale, true)
	width := func(n *node) float64 { return (n.base + n.head) / 2 }
	if width(root) <= 0 {
		return nil, fmt.Errorf("a flame graph of no samples")
	}
	px := float64(FlameWidth-2*margin) / width(root)
	// The largest self change sets the colour scale; the depth the height.
	var maxDelta float64
	depth := 0
	var walk func(n *node, d int)
	walk = func(n *node, d int) {
		if width(n)*px < minFrameW {
			return
		}
		maxDelta = max(maxDelta, math.Abs(n.headSelf-n.baseSelf))
		depth = max(depth, d)
		for _, c := range n.children {
			walk(c, d+1)
		}
	}
	walk(root, 0)
	top := margin + headerLines*frameHeight
	height := top + (depth+1)*frameHeight + margin

	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="%d">`+"\n",
		FlameWidth, height, FlameWidth, height, fontSize)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", FlameWidth, height)
	title := in.Title
	if title == "" {
		title = "CPU per message, head against base"
	}
	line := func(y int, s string, bold bool) {
		w := ""
		if bold {
			w = ` font-weight="bold"`
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d"%s>%s</text>`+"\n", margin, y, w, esc(fit(s, float64(FlameWidth-2*margin))))
	}
	line(margin+fontSize, title, true)
	line(margin+fontSize+frameHeight, fmt.Sprintf("all: base %s, head %s CPU per message (%s)", fmtNs(root.base), fmtNs(root.head), signedPct(root.base, root.head)), false)
	line(margin+fontSize+2*frameHeight, "width: mean of base and head; colour: the frame's own (self) change, red grew, blue shrank", false)

	var draw func(n *node, x float64, d int)
	draw = func(n *node, x float64, d int) {
		w := width(n) * px
		if w < minFrameW {
			return
		}
		y := height - margin - (d+1)*frameHeight
		fill, ink := colour(n.headSelf-n.baseSelf, maxDelta)
		tip := fmt.Sprintf("%s\ntotal: base %s, head %s (%s)\nself: base %s, head %s (%s)",
			n.name, fmtNs(n.base), fmtNs(n.head), signedPct(n.base, n.head), fmtNs(n.baseSelf), fmtNs(n.headSelf), signedPct(n.baseSelf, n.headSelf))
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s" stroke="#ffffff" stroke-width="0.5"/>`,
			esc(tip), x, y, w, frameHeight-1, fill)
		if label := fit(n.name, w-6); label != "" {
			fmt.Fprintf(&b, `<text x="%.2f" y="%d" fill="%s">%s</text>`, x+3, y+fontSize, ink, esc(label))
		}
		b.WriteString("</g>\n")
		names := make([]string, 0, len(n.children))
		for k := range n.children {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			c := n.children[k]
			draw(c, x, d+1)
			x += width(c) * px
		}
	}
	draw(root, margin, 0)
	b.WriteString("</svg>\n")
	return b.Bytes(), nil
}

// colour is a frame's fill for its self change d against the largest
// change, and the text's colour on it.
func colour(d, maxDelta float64) (fill, ink string) {
	if maxDelta <= 0 || math.Abs(d) < maxDelta/100 {
		return "#e8e8e8", "#000000"
	}
	t := math.Min(1, math.Abs(d)/maxDelta)
	c := int(math.Round(225 * (1 - t)))
	ink = "#000000"
	if d > 0 {
		return fmt.Sprintf("rgb(255,%d,%d)", c, c), ink
	}
	if t > 0.55 {
		ink = "#ffffff"
	}
	return fmt.Sprintf("rgb(%d,%d,255)", c, c), ink
}

// fit is s cut to w pixels of text ("..." at the cut), or "" when not
// even three characters fit.
func fit(s string, w float64) string {
	n := int(w / charWidth)
	r := []rune(s)
	switch {
	case n < 3:
		return ""
	case len(r) <= n:
		return s
	}
	return string(r[:n-2]) + ".."
}

// esc escapes s as XML character data or an attribute value; characters
// XML cannot hold become U+FFFD.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// fmtNs is a cost per message.
func fmtNs(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	case ns >= 10:
		return fmt.Sprintf("%.0f ns", ns)
	}
	return fmt.Sprintf("%.2f ns", ns)
}

// signedPct is head against base in percent ("+12.3%"; "new" where the
// base had none).
func signedPct(base, head float64) string {
	switch {
	case base > 0:
		return fmt.Sprintf("%+.1f%%", 100*(head-base)/base)
	case head > 0:
		return "new"
	}
	return "none"
}

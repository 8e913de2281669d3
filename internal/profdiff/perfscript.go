package profdiff

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Weight is what a stack (or a frame) accounts for: samples, and the CPU
// nanoseconds of their periods (a cpu-clock sample's period is the time
// it stands for).
type Weight struct {
	Samples int64
	Ns      int64
}

func (w *Weight) add(o Weight) { w.Samples += o.Samples; w.Ns += o.Ns }

// Profile is one recording's stacks, folded: root first, frames joined by
// ";" ("runtime.goexit;main.serve;main.spin").
type Profile struct {
	Stacks map[string]Weight
	// Samples and Ns are the sums over Stacks.
	Samples, Ns int64
	// Unsymbolised counts the samples whose leaf frame had no symbol
	// (perf printed "[unknown]"): a stripped binary, or JIT code without a
	// perf map (Node without --perf-basic-prof).
	Unsymbolised int64
}

// NewProfile is an empty profile.
func NewProfile() *Profile { return &Profile{Stacks: map[string]Weight{}} }

// Add adds w to stack (frames root first; an empty stack is one frame
// "[unknown]"), unsymbolised when its leaf had no symbol.
func (p *Profile) Add(frames []string, w Weight, unsymbolised bool) {
	if len(frames) == 0 {
		frames, unsymbolised = []string{Unknown}, true
	}
	key := strings.Join(frames, ";")
	s := p.Stacks[key]
	s.add(w)
	p.Stacks[key] = s
	p.Samples += w.Samples
	p.Ns += w.Ns
	if unsymbolised {
		p.Unsymbolised += w.Samples
	}
}

// Merge adds every stack of q to p.
func (p *Profile) Merge(q *Profile) {
	for k, w := range q.Stacks {
		s := p.Stacks[k]
		s.add(w)
		p.Stacks[k] = s
	}
	p.Samples += q.Samples
	p.Ns += q.Ns
	p.Unsymbolised += q.Unsymbolised
}

// Unknown names a frame with neither symbol nor object.
const Unknown = "[unknown]"

// MaxLine bounds one line of `perf script` output or of a folded file.
const MaxLine = 1 << 20

// ParsePerfScript reads `perf script` output: samples separated by blank
// lines, each a header line ("comm pid/tid time: period event:") then its
// frames, leaf first, one per indented line ("addr sym+off (dso)"). A
// header without a period counts its sample with 0 ns. Lines starting
// with '#' (perf's --header) are skipped. An indented line before any
// header, or a frame line it cannot read, is an error naming the line.
func ParsePerfScript(r io.Reader) (*Profile, error) {
	p := NewProfile()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	var (
		in     bool     // inside a sample
		period int64    // its period
		leaf   []string // its frames, leaf first
		unsym  bool     // its leaf has no symbol
	)
	flush := func() {
		if !in {
			return
		}
		frames := make([]string, len(leaf))
		for i, f := range leaf {
			frames[len(leaf)-1-i] = f
		}
		p.Add(frames, Weight{Samples: 1, Ns: period}, unsym)
		in, leaf, unsym = false, leaf[:0], false
	}
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		trimmed := strings.TrimSpace(text)
		switch {
		case trimmed == "":
			flush()
		case text[0] == ' ' || text[0] == '\t':
			if !in {
				return nil, fmt.Errorf("line %d: a frame outside any sample", line)
			}
			name, known, err := parseFrame(trimmed)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			if len(leaf) == 0 {
				unsym = !known
			}
			leaf = append(leaf, name)
		case trimmed[0] == '#' && !in:
		default:
			flush()
			per, err := parseHeader(trimmed)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			in, period = true, per
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	flush()
	return p, nil
}

// parseHeader reads a sample's header and returns its period: the number
// right before the event name, the last field that ends in ':' and is not
// the time ("123.456:"). No number there: 0.
func parseHeader(h string) (int64, error) {
	f := strings.Fields(h)
	ev := -1
	for i := len(f) - 1; i >= 0; i-- {
		if strings.HasSuffix(f[i], ":") && !isTime(f[i]) {
			ev = i
			break
		}
	}
	if ev < 0 {
		return 0, fmt.Errorf("not a sample header (no event name ending in ':'): %.80q", h)
	}
	if ev > 0 {
		if n, err := strconv.ParseInt(f[ev-1], 10, 64); err == nil {
			if n < 0 {
				return 0, fmt.Errorf("negative period %d", n)
			}
			return n, nil
		}
	}
	return 0, nil
}

// isTime: "123.456789:", perf's timestamp field.
func isTime(s string) bool {
	s = strings.TrimSuffix(s, ":")
	a, b, ok := strings.Cut(s, ".")
	return ok && digits(a) && digits(b)
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseFrame reads one frame line ("7f12 main.spin+0x1f (/bin/srv)"):
// its name, and whether it had a symbol. The object is the last
// parenthesised group; a symbol's "+0x.." offset is dropped; a frame
// without a symbol is named by its object's base name in brackets.
func parseFrame(s string) (name string, known bool, err error) {
	addr, rest, _ := strings.Cut(s, " ")
	if !isHex(addr) {
		return "", false, fmt.Errorf("not a frame (no address first): %.80q", s)
	}
	rest = strings.TrimSpace(rest)
	sym, dso := rest, ""
	if strings.HasSuffix(rest, ")") {
		if i := strings.LastIndex(rest, " ("); i >= 0 {
			sym, dso = strings.TrimSpace(rest[:i]), rest[i+2:len(rest)-1]
		} else if strings.HasPrefix(rest, "(") {
			sym, dso = "", rest[1:len(rest)-1]
		}
	}
	if i := strings.LastIndex(sym, "+0x"); i > 0 && isHex(sym[i+3:]) {
		sym = strings.TrimSpace(sym[:i])
	}
	if sym == "" || sym == Unknown {
		return objectName(dso), false, nil
	}
	return clean(sym), true, nil
}

// objectName is a frame without a symbol: "[base name of its object]",
// or "[unknown]".
func objectName(dso string) string {
	if i := strings.LastIndexByte(dso, '/'); i >= 0 {
		dso = dso[i+1:]
	}
	dso = strings.Trim(dso, "[]")
	if dso == "" || dso == "unknown" {
		return Unknown
	}
	return "[" + clean(dso) + "]"
}

// clean makes a name one folded frame: no ";" (the separator), no
// control character.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == ';':
			return ':'
		case r < 0x20 || r == 0x7f:
			return '?'
		}
		return r
	}, s)
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

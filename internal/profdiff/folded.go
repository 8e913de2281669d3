package profdiff

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// WriteFolded writes p's stacks in the folded form, one "stack samples"
// line each, sorted by stack: what flamegraph.pl and difffolded.pl read.
// The nanoseconds are not written (a sample of a cpu-clock recording
// stands for one period, which the caller records beside the file).
func WriteFolded(w io.Writer, p *Profile) error {
	keys := make([]string, 0, len(p.Stacks))
	for k := range p.Stacks {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	bw := bufio.NewWriter(w)
	for _, k := range keys {
		if _, err := fmt.Fprintf(bw, "%s %d\n", k, p.Stacks[k].Samples); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ParseFolded reads the folded form: "frame;frame;... count" lines (the
// count after the last space), blank lines skipped. Ns stays 0; a stack
// whose leaf is a bracketed object name ("[node]", "[unknown]") counts as
// unsymbolised, as ParsePerfScript named it (and so does a symbol that
// is itself bracketed). A line without a count, a
// negative count or an empty frame is an error naming the line.
func ParseFolded(r io.Reader) (*Profile, error) {
	p := NewProfile()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		i := strings.LastIndexByte(text, ' ')
		if i < 0 {
			return nil, fmt.Errorf("line %d: no count after the stack", line)
		}
		n, err := strconv.ParseInt(text[i+1:], 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("line %d: %q is not a sample count", line, text[i+1:])
		}
		frames := strings.Split(strings.TrimSpace(text[:i]), ";")
		for j, f := range frames {
			if f == "" {
				return nil, fmt.Errorf("line %d: frame %d is empty", line, j+1)
			}
			frames[j] = clean(f)
		}
		leaf := frames[len(frames)-1]
		p.Add(frames, Weight{Samples: n}, strings.HasPrefix(leaf, "[") && strings.HasSuffix(leaf, "]"))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return p, nil
}

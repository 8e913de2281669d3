// Package termsafe is the one writer for what ceiling prints to a
// terminal from files or servers: a history line, a change point's
// series, a report's text, compare's and the sweep's lines, a server's
// log tail. A hostile history entry or a server's log could otherwise
// move the cursor, retitle the window, ring the bell, hide a line
// (ESC sequences, BEL, CR) or reorder what is read (bidirectional
// overrides).
//
// Writer replaces, in everything written through it, each C0 control
// but tab and newline (ESC, BEL, CR, ...), DEL, each C1 control
// (U+0080-U+009F), every bidirectional control (the embeddings,
// overrides and isolates, LRM, RLM and ALM), and every byte that is not
// valid UTF-8 (a terminal may read a lone 0x9B as CSI) with Replacement.
// Everything else passes unchanged, in order; a rune split across two
// writes is held until its end comes (or Flush).
//
// ceiling's own colour is added below it (cmd/ceiling's colourIfTerminal
// wraps the terminal beneath the Writer), so no text it carries can
// colour, and the colour it adds is not neutralised.
package termsafe

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// Replacement stands in for each neutralised character.
const Replacement = '\uFFFD'

// Writer neutralises control and bidirectional characters on their way
// to W. Safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	tail []byte // an incomplete rune from the last write
}

// NewWriter is a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Underlying is the writer beneath.
func (s *Writer) Underlying() io.Writer { return s.w }

// Write writes p's text, neutralised; it reports len(p) when the write
// beneath succeeded.
func (s *Writer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := append(s.tail, p...)
	s.tail = nil
	// Hold back an incomplete rune at the end (at most 3 bytes).
	cut := len(buf)
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-3; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	s.tail = append([]byte(nil), buf[cut:]...)
	if _, err := io.WriteString(s.w, String(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held of an incomplete rune (neutralised: it is
// not valid UTF-8).
func (s *Writer) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tail) == 0 {
		return nil
	}
	t := s.tail
	s.tail = nil
	_, err := io.WriteString(s.w, String(string(t)))
	return err
}

// Unsafe reports whether r is neutralised.
func Unsafe(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || r == 0x7f || (0x80 <= r && r <= 0x9f):
		return true
	case 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return r == utf8.RuneError // invalid UTF-8 (and U+FFFD itself, harmlessly)
}

// String is s with every Unsafe character, and every byte that is not
// valid UTF-8, replaced by Replacement.
func String(s string) string {
	clean := true
	for _, r := range s {
		if Unsafe(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s { // an invalid byte comes as RuneError
		if Unsafe(r) {
			b.WriteRune(Replacement)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

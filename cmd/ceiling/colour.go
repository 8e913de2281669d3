package main

import (
	"io"
	"os"
	"regexp"

	"github.com/ceiling-bench/ceiling/internal/termsafe"
)

// Colour for a person at a terminal: the outcome words of what ceiling
// prints are coloured when stdout is a terminal, TERM is not "dumb" and
// NO_COLOR is not set (https://no-color.org). Red is what fails a gate
// or a point, yellow what could not be judged or was not clean, green
// what passed. The colour is added after the layout, so a table's columns
// stay aligned (an escape takes no column), and a file, a pipe or a job
// log gets the plain text.

// outcomeWords are the words coloured, longest first.
var outcomeWords = regexp.MustCompile(`✗|✓|\b(?:PARTIAL RESULT|NOT CLEAN|CONTENDED|ERRORS|cannot_conclude|cannot conclude|contended|slower|faster|failed)\b`)

// colourOf is each outcome word's SGR colour.
var colourOf = map[string]string{
	"✗": "31", "slower": "31", "failed": "31", "ERRORS": "31", "PARTIAL RESULT": "31",
	"✓": "32", "faster": "32",
	"cannot_conclude": "33", "cannot conclude": "33", "contended": "33", "CONTENDED": "33", "NOT CLEAN": "33",
}

// colourWriter colours the outcome words of each write.
type colourWriter struct{ w io.Writer }

func (c colourWriter) Write(p []byte) (int, error) {
	out := outcomeWords.ReplaceAllFunc(p, func(m []byte) []byte {
		return []byte("\x1b[" + colourOf[string(m)] + "m" + string(m) + "\x1b[0m")
	})
	if _, err := c.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// colourIfTerminal is w, coloured when it is a terminal and the
// environment (getenv) allows colour.
// Beneath run's termsafe.Writer the colour goes between it and the
// terminal: the text is neutralised first, and the escapes of the colour
// added after it.
func colourIfTerminal(w io.Writer, getenv func(string) string) io.Writer {
	safe, isSafe := w.(*termsafe.Writer)
	under := w
	if isSafe {
		under = safe.Underlying()
	}
	f, ok := under.(*os.File)
	if !ok || getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" || !isTerminal(f) {
		return w
	}
	if isSafe {
		return termsafe.NewWriter(colourWriter{f})
	}
	return colourWriter{f}
}

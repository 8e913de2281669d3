package main

import (
	"bytes"
	"io"
	"sync"

	"github.com/ceiling-bench/ceiling/result"
)

// What ceiling prints for a person keeps within result.TableWidth (100)
// columns, every line and not only the tables: a line of prose that would
// run longer (a knob's note, a reason, an error) is wrapped at a space
// with result.Wrap, its continuation indented; an echoed command is
// shortened where it is printed (compare.go). The sweep's, compare's
// and init's output pass through a lineWriter, which wraps each whole
// line it is given and then colours it (colour.go: an escape takes no
// column, so the colour comes after the layout). The secrets are masked
// before the lines reach it (harness.Run's writers), so no wrap can
// split one.

// lineWriter wraps each complete line written to it and passes it on;
// a line's end that has not come yet waits for it, or for Flush.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// newLineWriter is w for a person: lines wrapped within
// result.TableWidth, coloured when w is a terminal that wants colour.
func newLineWriter(w io.Writer, getenv func(string) string) *lineWriter {
	return &lineWriter{w: colourIfTerminal(w, getenv)}
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	i := bytes.LastIndexByte(l.buf, '\n')
	if i < 0 {
		return len(p), nil
	}
	out := result.Wrap(string(l.buf[:i+1]), result.TableWidth)
	l.buf = append(l.buf[:0], l.buf[i+1:]...)
	if _, err := io.WriteString(l.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is left of a last line without its end.
func (l *lineWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) == 0 {
		return nil
	}
	out := result.Wrap(string(l.buf), result.TableWidth)
	l.buf = l.buf[:0]
	_, err := io.WriteString(l.w, out)
	return err
}

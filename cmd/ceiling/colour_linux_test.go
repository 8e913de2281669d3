package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the side a program writes to
// (a terminal, as a person's shell gives it) and the side that reads it.
func openPTY(t *testing.T) (tty, ptmx *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI is set and no pseudo-terminal opened: %v", err)
		}
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the terminal side: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, m
}

// TestColourOnATerminalOnly: on a real (pseudo-)terminal the outcome
// words are coloured; NO_COLOR, TERM=dumb, a file or a pipe get the text
// as it is.
func TestColourOnATerminalOnly(t *testing.T) {
	tty, ptmx := openPTY(t)
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	line := "headline: slower, -12.0% ✗ (3 contended)\n"
	w := colourIfTerminal(tty, env("TERM", "xterm"))
	if _, ok := w.(colourWriter); !ok {
		t.Fatalf("a terminal got %T, want colour", w)
	}
	if _, err := w.Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
	// The line, however the terminal hands it over: read to its end.
	var got string
	for buf := make([]byte, 512); !strings.Contains(got, "\n"); {
		n, err := ptmx.Read(buf)
		if err != nil {
			t.Fatalf("read %q, then %v", got, err)
		}
		got += string(buf[:n])
	}
	for _, want := range []string{"\x1b[31mslower\x1b[0m", "\x1b[31m✗\x1b[0m", "\x1b[33mcontended\x1b[0m"} {
		if !strings.Contains(got, want) {
			t.Errorf("the terminal read %q, want %q in it", got, want)
		}
	}
	for name, get := range map[string]func(string) string{
		"NO_COLOR": env("NO_COLOR", "1", "TERM", "xterm"), "TERM=dumb": env("TERM", "dumb"),
	} {
		if w := colourIfTerminal(tty, get); w != tty {
			t.Errorf("%s: got %T, want the terminal as it is", name, w)
		}
	}
	f, err := os.Create(t.TempDir() + "/out.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if w := colourIfTerminal(f, env("TERM", "xterm")); w != f {
		t.Errorf("a file got %T, want it as it is", w)
	}
	var b bytes.Buffer
	if w := colourIfTerminal(&b, env("TERM", "xterm")); w != &b {
		t.Errorf("a buffer got %T", w)
	}
}

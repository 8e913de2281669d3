package termsafe

import (
	"bytes"
	"strings"
	"testing"
)

// hostile is what issue 52's hostile history line carried: ESC sequences
// (a colour, a window title, a cursor move), BEL, a carriage return, a
// C1 CSI (raw and as a lone byte) and the bidirectional overrides.
const hostile = "a\x1b[31mred\x1b]0;title\x07\rb\x1b[2A" + "\u009b31m" + "\x9b" + "\u202eevil\u202c\u2066x\u2069\u200f\x7f\x00end"

func TestStringNeutralisesControls(t *testing.T) {
	got := String(hostile)
	for _, bad := range []string{"\x1b", "\x07", "\r", "\u009b", "\x9b", "\u202e", "\u202c", "\u2066", "\u2069", "\u200f", "\x7f", "\x00"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q passed: %q", bad, got)
		}
	}
	for _, keep := range []string{"red", "title", "evil", "end"} {
		if !strings.Contains(got, keep) {
			t.Errorf("the text %q was lost: %q", keep, got)
		}
	}
	plain := "commit  headline ≥ 12,345 msg/s ▲ é\tok\n"
	if String(plain) != plain {
		t.Errorf("plain text changed: %q", String(plain))
	}
}

// TestWriterHoldsASplitRune: a rune split across writes (a bidi override
// is 3 bytes) is judged whole, and ordinary text split the same way
// passes unchanged.
func TestWriterHoldsASplitRune(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	in := []byte("x\u202ey é ▲\n")
	for i := range in {
		if n, err := w.Write(in[i : i+1]); n != 1 || err != nil {
			t.Fatalf("write %d: %d %v", i, n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := "x\uFFFDy é ▲\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	out.Reset()
	_, _ = w.Write([]byte{'a', 0xe2, 0x80}) // an incomplete rune, then the end
	_ = w.Flush()
	if got := out.String(); bytes.IndexByte(out.Bytes(), 0xe2) >= 0 || !strings.HasPrefix(got, "a") {
		t.Errorf("an incomplete rune at the end: %q", got)
	}
}

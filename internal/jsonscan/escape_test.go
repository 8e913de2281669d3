package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// marshal is encoding/json's encoding of s with HTML escaping off: the
// reference AppendString must match byte for byte.
func marshal(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

var escapeInputs = []string{
	"", "plain", `quote " and \ backslash`, "ctl \x00\x01\x1f\b\f\n\r\t",
	"<html>&amp;", "utf8 é 日本 🎉", "bad \xff\xfe utf8", "sep \u2028 \u2029",
	`{"some":"data"}`,
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, in := range escapeInputs {
		got := string(AppendString(nil, in))
		if want := marshal(in); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestAppendVerbatim: only '"', '\\' and control bytes are escaped (\b and
// \f as \u00XX); every other byte, invalid UTF-8 included, is copied.
func TestAppendVerbatim(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"a\\b\"c\x01é", `a\\b\"c\u0001é`},
		{"ctl \x00\x1f\b\f\n\r\t", `ctl \u0000\u001f\u0008\u000c\n\r\t`},
		{"bad \xff\xfe", "bad \xff\xfe"},
		{"sep \u2028", "sep \u2028"},
	} {
		if got := string(AppendVerbatim([]byte("<"), []byte(c.in))); got != "<"+c.want {
			t.Errorf("AppendVerbatim(%q) = %q, want %q", c.in, got, "<"+c.want)
		}
	}
}

func TestEscapeAllocatesNothing(t *testing.T) {
	buf := make([]byte, 0, 256)
	s := "quote \" é \xff \u2028 \n"
	if n := testing.AllocsPerRun(1000, func() {
		buf = AppendString(buf[:0], s)
		buf = AppendVerbatim(buf, []byte("payload \x01 \xff"))
	}); n != 0 {
		t.Errorf("%v allocations per AppendString+AppendVerbatim, want 0", n)
	}
}

// FuzzEscape holds AppendString to encoding/json byte for byte, and
// AppendVerbatim to its contract: valid JSON that decodes back to a valid
// UTF-8 input, and the input's bytes unchanged but for the escapes.
func FuzzEscape(f *testing.F) {
	for _, s := range escapeInputs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendString(nil, s)), marshal(s); got != want {
			t.Fatalf("AppendString(%q) = %s, encoding/json %s", s, got, want)
		}
		v := AppendVerbatim([]byte{'"'}, []byte(s))
		v = append(v, '"')
		if utf8.ValidString(s) {
			var back string
			if err := json.Unmarshal(v, &back); err != nil || back != s {
				t.Fatalf("AppendVerbatim(%q) = %s decodes to %q, %v", s, v, back, err)
			}
		}
		un, ok := Unescape(nil, v[1:len(v)-1])
		if !ok || string(un) != s {
			t.Fatalf("AppendVerbatim(%q) = %s unescapes to %q", s, v, un)
		}
	})
}

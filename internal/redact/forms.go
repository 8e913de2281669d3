package redact

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Forms are the ways a secret is commonly written other than as itself,
// each masked wherever the secret is (Set.String, Set.Contains): a
// server that logs its config base64-encoded, hex-dumped, URL-encoded or
// JSON-escaped (once or twice) leaks it as surely as in clear.
//
// JSON and URL forms are those of the common encoders, not only Go's
// (jsonForms, urlForms): a server in JavaScript, Python, PHP or Java
// writes its own. TestFormsOfRealEncoders checks them against Node and
// Python themselves.
//
// Base64 does not encode a secret the same way wherever it stands: inside
// a longer encoded string (an "Authorization: Basic" header of
// "user:secret") its bytes start at one of three offsets from a 3-byte
// group. For each offset and both alphabets, the form is the run of
// characters that only the secret's bits make (the one or two characters
// at each edge also hold a neighbour's bits, and are left); with padding
// or without, that run is in every encoding that contains the secret.
//
// Not covered: a secret split over two lines or writes, compressed,
// encrypted or otherwise transformed. Log tails are not published by
// default for that reason (docs/targets.md, "Secrets").
func Forms(x string) []string {
	if x == "" {
		return nil
	}
	seen := map[string]bool{x: true}
	var out []string
	add := func(f string) {
		if f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := range 3 {
			add(base64Core(enc, x, k))
		}
	}
	add(hex.EncodeToString([]byte(x)))
	add(strings.ToUpper(hex.EncodeToString([]byte(x))))
	for _, f := range urlForms(x) {
		add(f)
	}
	for _, f := range jsonForms(x) {
		add(f)
	}
	return out
}

// jsonForms are x's body inside a JSON string, once and twice escaped
// (a JSON document logged as a JSON string), as each common encoder
// writes it:
//   - Go's encoding/json: <, >, & as \u003c \u003e \u0026, and U+2028/9;
//   - JavaScript's JSON.stringify, Python's json.dumps(ensure_ascii=False),
//     Rust's serde_json: only ", \ and control characters;
//   - Python's json.dumps by default: every non-ASCII character as
//     \uXXXX (a UTF-16 surrogate pair beyond U+FFFF), in lower and in
//     upper case hex (Java's encoders differ);
//   - PHP's json_encode: that, and / as \/.
func jsonForms(x string) []string {
	type enc func(string) string
	encoders := []enc{
		jsonEscaped,
		func(v string) string { return jsonEscape(v, false, false, false) },
		func(v string) string { return jsonEscape(v, true, false, false) },
		func(v string) string { return jsonEscape(v, true, true, false) },
		func(v string) string { return jsonEscape(v, true, false, true) },
	}
	var out []string
	for _, e := range encoders {
		once := e(x)
		out = append(out, once, e(once))
	}
	return out
}

// jsonEscape escapes v as a JSON string's body: ", \ and control
// characters always (\n, \r, \t, \b, \f, else \u00XX); non-ASCII as
// \uXXXX when ascii (upper case hex when upper); / as \/ when slash.
func jsonEscape(v string, ascii, upper, slash bool) string {
	hexf := "\\u%04x"
	if upper {
		hexf = "\\u%04X"
	}
	var b strings.Builder
	for _, r := range v {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '/' && slash:
			b.WriteString(`\/`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(&b, hexf, r)
		case r >= 0x7f && ascii: // Python escapes DEL too
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				fmt.Fprintf(&b, hexf+hexf, r1, r2)
			} else {
				fmt.Fprintf(&b, hexf, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// urlForms are x percent-encoded as the common encoders write it: Go's
// QueryEscape and PathEscape; RFC 3986's unreserved set kept (Python's
// quote(safe=""), quote_plus), with / kept too (quote's default), and
// JavaScript's encodeURIComponent's (which keeps !*'() as well); a space
// as %20 or +; the hex digits in upper or lower case.
func urlForms(x string) []string {
	out := []string{url.QueryEscape(x), url.PathEscape(x)}
	keeps := []string{"-._~", "-._~/", "-._~!*'()"}
	for _, keep := range keeps {
		for _, plus := range []bool{false, true} {
			f := percentEncode(x, keep, plus)
			out = append(out, f, lowerPercent(f))
		}
	}
	return out
}

// percentEncode keeps ASCII letters, digits and the bytes of keep, writes
// a space as + when plus, and every other byte as %XX.
func percentEncode(x, keep string, plus bool) string {
	var b strings.Builder
	for i := 0; i < len(x); i++ {
		c := x[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte(keep, c) >= 0:
			b.WriteByte(c)
		case c == ' ' && plus:
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// lowerPercent writes f's %XX escapes in lower case.
func lowerPercent(f string) string {
	b := []byte(f)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerHex(b[i+1]), lowerHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// base64Core is the part of enc's encoding of x, standing k bytes past a
// 3-byte boundary, that only x's bits make: characters i with 6i >= 8k
// and 6i+6 <= 8(k+len(x)).
func base64Core(enc *base64.Encoding, x string, k int) string {
	b := make([]byte, k+len(x))
	copy(b[k:], x)
	s := enc.EncodeToString(b)
	lo := (8*k + 5) / 6
	hi := 8 * (k + len(x)) / 6
	if hi-lo < MinLen {
		return "" // too short to mask without masking ordinary text
	}
	return s[lo:hi]
}

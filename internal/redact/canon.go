package redact

import (
	"encoding/base64"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The secrets gate decodes rather than enumerates. Forms lists how the
// common encoders write a secret, but a server's logger may nest one
// encoder in another (a JSON log line holding a URL-encoded config
// holding a base64 credential) or use one Forms does not know (Gson's
// HTML-safe \u003d and \u0027, PHP's \/ beside raw UTF-8, %7E). So
// Set.Contains and Set.String also look at Stages of the text: the text
// decoded, repeatedly, by each of the decoders that undo an escaping —
// JSON string escapes (\uXXXX with surrogate pairs, \/, \", \\, \n ...),
// percent-encoding (with + as a space and without), HTML entities and the
// runs of base64 (either alphabet, at each of the four alignments) — and
// look for each secret, and each of its Forms, in every stage: the text
// itself, each stage between and the fully decoded one.
//
// It is the one gate: everything that writes to a published place (the
// harness's writers and redacted files, result.RedactResult, publish's
// CheckSecrets for the data branch, a comment, a summary, the site)
// asks Set.String or Set.Contains, and both see the same Stages.

// MaxStages bounds the texts Stages returns, and MaxDepth how many
// decodings deep it goes (three: a secret nested in two encodings and
// one more for an escaping of those).
const (
	MaxStages = 64
	MaxDepth  = 3
)

// Stages is text followed by each distinct text that decoding it, up to
// MaxDepth times, gives (at most MaxStages in all). A decoding that is
// not valid UTF-8 is looked in but not decoded further: a secret is
// text, and so is every escaping of it.
func Stages(text string) []string {
	out := []string{text}
	seen := map[string]bool{text: true}
	level := []string{text}
	for d := 0; d < MaxDepth && len(level) > 0; d++ {
		var next []string
		for _, s := range level {
			for _, dec := range decodings(s) {
				if len(out) >= MaxStages {
					return out
				}
				if !seen[dec] {
					seen[dec] = true
					out = append(out, dec)
					if utf8.ValidString(dec) {
						next = append(next, dec)
					}
				}
			}
		}
		level = next
	}
	return out
}

// decodings are s decoded once by each decoder whose escape s holds.
func decodings(s string) []string {
	var out []string
	if strings.IndexByte(s, '\\') >= 0 {
		out = append(out, jsonUnescape(s))
	}
	if strings.IndexByte(s, '%') >= 0 || strings.IndexByte(s, '+') >= 0 {
		out = append(out, percentDecode(s, true))
		if strings.IndexByte(s, '%') >= 0 && strings.IndexByte(s, '+') >= 0 {
			out = append(out, percentDecode(s, false))
		}
	}
	if strings.IndexByte(s, '&') >= 0 {
		out = append(out, htmlUnescape(s))
	}
	if d := runsDecoded(s); d != "" {
		out = append(out, d)
	}
	return out
}

// minRun is the shortest run decoded: base64 or hex of MinLen bytes.
const minRun = 11

// runsDecoded is, for each run of s that may be base64 (either
// alphabet) or hex, its decodings that are valid UTF-8, one a line:
// base64 at each of the four alignments (a run may start with a
// neighbour's letters), hex at both.
func runsDecoded(s string) string {
	var b strings.Builder
	add := func(d []byte) {
		if len(d) >= MinLen && utf8.Valid(d) {
			b.Write(d)
			b.WriteByte('\n')
		}
	}
	for i := 0; i < len(s); {
		if !isB64(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isB64(s[j]) {
			j++
		}
		for pad := 0; pad < 2 && j < len(s) && s[j] == '='; pad++ {
			j++
		}
		if run := s[i:j]; len(run) >= minRun {
			for k := range 4 {
				add(base64Lenient(run[k:]))
			}
			if h := strings.TrimRight(run, "="); isHex(h) {
				for k := range 2 {
					add(hexLenient(h[k:]))
				}
			}
		}
		i = j
	}
	return b.String()
}

func isB64(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if _, ok := unhex(s[i]); !ok {
			return false
		}
	}
	return true
}

// hexLenient decodes h's whole pairs of hex digits.
func hexLenient(h string) []byte {
	out := make([]byte, len(h)/2)
	for i := range out {
		hi, _ := unhex(h[2*i])
		lo, _ := unhex(h[2*i+1])
		out[i] = hi<<4 | lo
	}
	return out
}

// urlAlphabet turns base64's URL alphabet into the standard one.
var urlAlphabet = strings.NewReplacer("-", "+", "_", "/")

// base64Lenient decodes r as base64 of either alphabet, padded or not,
// as far as whole characters go; garbage where r is no base64.
func base64Lenient(r string) []byte {
	r = strings.TrimRight(r, "=")
	r = urlAlphabet.Replace(r)
	if len(r)%4 == 1 {
		r = r[:len(r)-1]
	}
	b, err := base64.RawStdEncoding.DecodeString(r)
	if err != nil {
		return nil
	}
	return b
}

// jsonUnescape undoes one level of JSON string escapes wherever they
// stand (\" \\ \/ \b \f \n \r \t, \uXXXX in either case, a surrogate
// pair as its rune); a backslash that starts none is kept.
func jsonUnescape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
			i++
		case 'b':
			b.WriteByte('\b')
			i++
		case 'f':
			b.WriteByte('\f')
			i++
		case 'n':
			b.WriteByte('\n')
			i++
		case 'r':
			b.WriteByte('\r')
			i++
		case 't':
			b.WriteByte('\t')
			i++
		case 'u':
			r, ok := hex4(s, i+2)
			if !ok {
				b.WriteByte(c)
				continue
			}
			i += 5
			if utf16.IsSurrogate(r) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if r2, ok := hex4(s, i+3); ok {
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						r = pair
						i += 6
					}
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// hex4 is the rune of the four hex digits at s[i:], if they are.
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		v, ok := unhex(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// percentDecode undoes %XX escapes wherever they stand (and + as a space
// when plus); a % that starts none is kept.
func percentDecode(s string, plus bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+' && plus:
			b.WriteByte(' ')
		case c == '%' && i+2 < len(s):
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b.WriteByte(hi<<4 | lo)
				i += 2
			} else {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// htmlEntities are the named entities HTML escapers write.
var htmlEntities = map[string]rune{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\'', "nbsp": 0xa0}

// htmlUnescape undoes the entities HTML escapers write (PHP's
// htmlspecialchars, Python's html.escape, Go's html.EscapeString, a
// template's): the named ones above and every numeric one (&#39;
// &#x27;); anything else is kept. (Not package html: the packages that
// link redact allow only what they name.)
func htmlUnescape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '&' {
			b.WriteByte(s[i])
			continue
		}
		end := strings.IndexByte(s[i:min(len(s), i+12)], ';')
		if end < 2 {
			b.WriteByte('&')
			continue
		}
		name := s[i+1 : i+end]
		r, ok := htmlEntities[name]
		if !ok && name[0] == '#' {
			var v uint64
			var err error
			if len(name) > 2 && (name[1] == 'x' || name[1] == 'X') {
				v, err = strconv.ParseUint(name[2:], 16, 32)
			} else {
				v, err = strconv.ParseUint(name[1:], 10, 32)
			}
			r, ok = rune(v), err == nil && v <= utf8.MaxRune
		}
		if !ok {
			b.WriteByte('&')
			continue
		}
		b.WriteRune(r)
		i += end
	}
	return b.String()
}

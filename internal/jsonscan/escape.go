package jsonscan

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string literal, escaping like
// encoding/json without HTML escaping: invalid UTF-8 becomes U+FFFD and
// U+2028/U+2029 are escaped.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s, false)
	return append(dst, '"')
}

// AppendVerbatim appends s escaped for the inside of a JSON string, byte
// for byte: only '"', '\\' and the bytes below 0x20 are escaped (\n \r \t
// short, the others as \u00XX), and every other byte is copied as it is,
// whether or not it is valid UTF-8. A payload of random bytes keeps its
// bytes and, but for those escapes, its size.
func AppendVerbatim(dst, s []byte) []byte {
	return appendEscaped(dst, bytesToString(s), true)
}

// appendEscaped appends the escaped contents of s. verbatim selects
// AppendVerbatim's rules over encoding/json's.
func appendEscaped(dst []byte, s string, verbatim bool) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf || verbatim {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\b' && !verbatim:
				dst = append(dst, '\\', 'b')
			case c == '\f' && !verbatim:
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

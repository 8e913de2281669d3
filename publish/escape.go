package publish

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxText bounds one untrusted string in the comment.
const maxText = 300

// wordJoiner is invisible; placed after '@' and '#' it stops GitHub from
// turning text into a mention or an issue link.
const wordJoiner = "\u2060"

// text escapes an untrusted string (a branch name, a regime, a warning,
// anything from a result or a pull request) for inline Markdown that may sit
// in a table cell, a list item or a <details> block: it stays one line of
// plain text. HTML is inert (entities), Markdown punctuation is
// backslash-escaped, ':' is an entity so no URL autolinks, '@' and '#'
// cannot mention or link.
func text(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxText {
		s = string([]rune(s)[:maxText]) + "…"
	}
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case ':':
			b.WriteString("&#58;")
		case '@', '#':
			b.WriteRune(r)
			b.WriteString(wordJoiner)
		case '\\', '`', '*', '_', '{', '}', '[', ']', '(', ')', '+', '-', '.', '!', '|', '~', '=', '$', '^', '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// chartLabel keeps only characters that cannot end a quoted mermaid string
// or inject a directive; everything the chart shows is built from numbers
// anyway.
func chartLabel(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(" ,.()/%-", r)) {
			return r
		}
		return -1
	}, s)
}

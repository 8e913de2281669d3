package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLookup(t *testing.T) {
	msg := []byte(` { "type" : "op", "room":"r3","from":"c17","v":42,"ts":-12,` +
		`"data":{"a":[1,{"b":"}"}],"n":{"x":"y\"z"}},"e\u0073c":"k","s":"a\\\"b","z":null, "f":1.5e3}`)
	cases := []struct {
		path string
		want string
		ok   bool
	}{
		{"type", `"op"`, true},
		{"v", `42`, true},
		{"ts", `-12`, true},
		{"data", `{"a":[1,{"b":"}"}],"n":{"x":"y\"z"}}`, true},
		{"data.n.x", `"y\"z"`, true},
		{"data.a", `[1,{"b":"}"}]`, true},
		{"data.a.b", ``, false}, // arrays are not walked
		{"esc", `"k"`, true},    // the key is written with an escape
		{"s", `"a\\\"b"`, true},
		{"z", `null`, true},
		{"f", `1.5e3`, true},
		{"missing", ``, false},
		{"type.x", ``, false},
	}
	for _, c := range cases {
		v, ok := Lookup(msg, strings.Split(c.path, "."))
		if ok != c.ok || string(v) != c.want {
			t.Errorf("Lookup(%s) = %q, %v; want %q, %v", c.path, v, ok, c.want, c.ok)
		}
	}
	for _, bad := range []string{``, `[]`, `{`, `{"type"`, `{"type":`, `{"a":1 "type":"op"}`, `{"a":{"type":"op"}`, `"type"`} {
		if v, ok := Lookup([]byte(bad), []string{"type"}); ok {
			t.Errorf("Lookup(%q) = %q, true; want not found", bad, v)
		}
	}
}

func TestParseInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-5", -5, true}, {"9223372036854775807", 1<<63 - 1, true},
		{"-9223372036854775808", -1 << 63, true}, {"9223372036854775808", 0, false},
		{"1.5", 0, false}, {"1e3", 0, false}, {`"12"`, 0, false}, {"", 0, false}, {"-", 0, false},
		{"99999999999999999999", 0, false},
	} {
		v, ok := ParseInt([]byte(c.in))
		if v != c.want || ok != c.ok {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", c.in, v, ok, c.want, c.ok)
		}
	}
}

func TestValueEqual(t *testing.T) {
	for _, c := range []struct {
		raw, want string
		eq        bool
	}{
		{`"op"`, `"op"`, true},
		{`"o\u0070"`, `"op"`, true},
		{`"op"`, `"o\u0070"`, true},
		{`"a\"b"`, `"a\"b"`, true},
		{`"a\u0022b"`, `"a\"b"`, true},
		{`"op"`, `"ops"`, false},
		{`429`, `429`, true},
		{`429`, `"429"`, false},
		{`"\ud83d\ude00"`, `"😀"`, true},
	} {
		if got := ValueEqual([]byte(c.raw), []byte(c.want)); got != c.eq {
			t.Errorf("ValueEqual(%s, %s) = %v, want %v", c.raw, c.want, got, c.eq)
		}
	}
}

// FuzzLookup holds the scanner to encoding/json: on every valid JSON
// object without duplicate keys, each top-level key (and each key of a
// nested object, as a dotted path) is found with the value encoding/json
// returns, and a key it does not have is not found. On any input it must
// not panic.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{
		`{"type":"op","room":"r3","from":"c17","v":1,"ts":123,"data":{"k":"v"}}`,
		`{"a":"\"}","b":[1,2,{"c":"]"}],"d":{"e":{"f":true}}}`,
		`{ "x" : -1.5e-3 , "y" : null , "z" : "\u00e9\n" }`,
		`{"\u0074ype":"ack"}`,
		`{}`, `{"a":{}}`, `[1]`, `{"a":1,"a":2}`, `{"a":"b\\"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		var probe = [][]string{{"type"}, {"a"}, {"data", "k"}, {"d", "e", "f"}, {""}}
		for _, p := range probe {
			Lookup(msg, p) // must not panic on anything
		}
		if !json.Valid(msg) || !utf8.Valid(msg) {
			return // encoding/json rewrites invalid UTF-8 to U+FFFD; Lookup compares bytes
		}
		checkObject(t, msg, nil)
	})
}

// checkObject compares Lookup with encoding/json on every key of the
// object at prefix (recursing into nested objects).
func checkObject(t *testing.T, root []byte, prefix []string) {
	obj := root
	if len(prefix) > 0 {
		v, ok := Lookup(root, prefix)
		if !ok {
			t.Fatalf("Lookup(%q) not found", prefix)
		}
		obj = v
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return // not an object
	}
	if hasDuplicateKeys(obj) {
		return // encoding/json keeps the last, Lookup the first
	}
	for k, want := range m {
		path := append(append([]string{}, prefix...), k)
		got, ok := Lookup(root, path)
		if !ok || !bytes.Equal(got, bytes.TrimSpace(want)) {
			t.Fatalf("Lookup(%q) in %q = %q, %v; encoding/json: %q", path, root, got, ok, want)
		}
		if len(path) < 4 {
			checkObject(t, root, path)
		}
	}
	if len(prefix) == 0 {
		// LookupTop finds every key at once, and nothing for an absent one.
		keys := []string{"\x00absent"}
		for k := range m {
			keys = append(keys, k)
		}
		out := make([][]byte, len(keys))
		if !LookupTop(root, keys, out) {
			t.Fatalf("LookupTop(%q) failed on a valid object", root)
		}
		for i, k := range keys {
			want := []byte(nil)
			if i > 0 {
				want = bytes.TrimSpace(m[k])
			}
			if !bytes.Equal(out[i], want) || (i == 0) != (out[i] == nil) {
				t.Fatalf("LookupTop(%q)[%q] = %q; encoding/json: %q", root, k, out[i], want)
			}
		}
	}
	absent := append(append([]string{}, prefix...), "\x00absent")
	if v, ok := Lookup(root, absent); ok {
		t.Fatalf("Lookup(%q) in %q found %q", absent, root, v)
	}
}

func hasDuplicateKeys(obj []byte) bool {
	d := json.NewDecoder(bytes.NewReader(obj))
	if _, err := d.Token(); err != nil {
		return false
	}
	seen := map[string]bool{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		k := tok.(string)
		if seen[k] {
			return true
		}
		seen[k] = true
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// TestScanAllocatesNothing: the lookups allocate nothing, escaped keys
// and values included.
func TestScanAllocatesNothing(t *testing.T) {
	msg := []byte(`{"type":"op","d\u0061ta":{"n":{"x":"y\"z"}},"from":"c\u0031","ts":1732900000123456789}`)
	keys := []string{"type", "from", "ts"}
	out := make([][]byte, len(keys))
	path := []string{"data", "n", "x"}
	want := []byte(`"c1"`)
	n := testing.AllocsPerRun(1000, func() {
		if !LookupTop(msg, keys, out) || !ValueEqual(out[1], want) {
			t.Fatal("LookupTop")
		}
		if _, ok := ParseInt(out[2]); !ok {
			t.Fatal("ParseInt")
		}
		if _, ok := Lookup(msg, path); !ok {
			t.Fatal("Lookup")
		}
		if _, _, fault := ScanString(out[1], 0); fault != "" {
			t.Fatal("ScanString")
		}
		if _, ok := ScanNumber(out[2], 0); !ok {
			t.Fatal("ScanNumber")
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per LookupTop+ValueEqual+ParseInt+Lookup+ScanString+ScanNumber, want 0", n)
	}
}

// endOfStringRef is the plain loop EndOfString's vectorised scan replaces:
// a backslash escapes the byte after it.
func endOfStringRef(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case '"':
			return i
		case '\\':
			i += 2
		default:
			i++
		}
	}
	return -1
}

// FuzzEndOfString holds the vectorised EndOfString to the plain loop, from
// every start, on any input.
func FuzzEndOfString(f *testing.F) {
	for _, s := range []string{`abc"`, `a\"b"`, `\\\\"`, `xxxxxxxxxxxxxxx\"xxxxxxxx\\"`, `xxxxxxxxxxxxxxx\`, `\`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for i := 0; i <= len(b); i++ {
			if got, want := EndOfString(b, i), endOfStringRef(b, i); got != want {
				t.Fatalf("EndOfString(%q, %d) = %d, plain loop %d", b, i, got, want)
			}
		}
	})
}

// FuzzStrict holds the strict scanners to encoding/json: a literal alone
// is valid JSON exactly when ScanString or ScanNumber takes all of it, and
// what they take is valid JSON. UTF-8 is the caller's to check.
func FuzzStrict(f *testing.F) {
	for _, s := range []string{`"a\"b"`, `"\u00e9\ud83d\ude00"`, `"\x"`, "\"\x01\"", `"\u12"`, `"abc`, `"a\`,
		`0`, `-0.5e+3`, `01`, `1.`, `-`, `1e`, `12.5E-07`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || !utf8.Valid(b) || len(bytes.TrimSpace(b)) != len(b) {
			return
		}
		var end int
		var ok bool
		switch c := b[0]; {
		case c == '"':
			var esc bool
			var fault string
			end, esc, fault = ScanString(b, 0)
			ok = fault == ""
			if ok && esc != bytes.ContainsRune(b[:end], '\\') {
				t.Fatalf("ScanString(%q): esc %v", b, esc)
			}
		case c == '-' || c >= '0' && c <= '9':
			end, ok = ScanNumber(b, 0)
		default:
			return
		}
		if end < 0 || end > len(b) {
			t.Fatalf("%q: end %d out of range", b, end)
		}
		if ok && !json.Valid(b[:end]) {
			t.Fatalf("%q: took %q, which encoding/json refuses", b, b[:end])
		}
		if whole := ok && end == len(b); whole != json.Valid(b) {
			t.Fatalf("%q: ours takes it whole %v, encoding/json valid %v", b, whole, json.Valid(b))
		}
	})
}

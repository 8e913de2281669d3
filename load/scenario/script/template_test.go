package script

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTemplates(t *testing.T) {
	vs := &vars{}
	vs.ints[varRoom], vs.ints[varConn], vs.ints[varSeq], vs.ints[varTsNs] = 3, 17, 42, -5
	vs.strs[varRole] = []byte("editor")
	vs.strs[varClient] = []byte(`c"17`)
	vs.strs[varPayload] = []byte("a\\b\"c\x01é")
	vs.strs[varURL] = []byte("ws://h:1")
	text := []struct{ in, want string }{
		{"{url}/rooms?room=r{room}&c={conn}", "ws://h:1/rooms?room=r3&c=17"},
		{"{{literal}} {role}", "{literal} editor"},
		{"plain", "plain"},
		{"", ""},
	}
	for _, c := range text {
		tm, err := compileText(c.in, varsConnURL)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if got := tm.String(vs); got != c.want {
			t.Errorf("text %q = %q, want %q", c.in, got, c.want)
		}
	}
	js := []struct{ in, want string }{
		{`{"ts":"{ts_ns}","seq":"{seq}","room":"{room}"}`, `{"ts":-5,"seq":42,"room":3}`},
		{`{"room":"r{room}","who":"{client}","r":"{role}"}`, `{"room":"r3","who":"c\"17","r":"editor"}`},
		{`{"p":"{payload}","q":"<{payload}>"}`, `{"p":"a\\b\"c\u0001é","q":"<a\\b\"c\u0001é>"}`},
		{` [ 1 , {"a" : [ "{seq}" , "x{conn}" ] } , null , "{{x}}" ] `, `[1,{"a":[42,"x17"]},null,"{x}"]`},
		{`{"esc":"a\"b\\n{seq}"}`, `{"esc":"a\"b\\n42"}`},
		{`"{ts_ns}"`, `-5`},
		{`7`, `7`},
	}
	for _, c := range js {
		tm, err := compileJSON(json.RawMessage(c.in), varsMessage)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		got := string(tm.Append(nil, vs))
		if got != c.want {
			t.Errorf("json %s\n  = %s\nwant %s", c.in, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("json %s rendered invalid JSON %s", c.in, got)
		}
	}
	for _, bad := range []string{`{"a":"{nope}"}`, `{"a":"{id}"}`, `{"a":"{url}"}`, `{"a":"x}"}`, `{"a":"{seq"}`} {
		if _, err := compileJSON(json.RawMessage(bad), varsMessage); err == nil {
			t.Errorf("%s compiled", bad)
		}
	}
}

// TestRenderAllocs: rendering a send into a reused buffer allocates
// nothing.
func TestRenderAllocs(t *testing.T) {
	spec, err := ParseFile(roomsFile)
	if err != nil {
		t.Fatal(err)
	}
	sd := spec.Roles[0].Sends[0]
	vs := &vars{}
	vs.strs[varClient] = []byte("c1")
	vs.strs[varPayload] = []byte(strings.Repeat("x", 200))
	var id, buf []byte
	render := func() {
		vs.ints[varSeq]++
		vs.ints[varTsNs] += 1000
		id = sd.ID.Append(id[:0], vs)
		vs.strs[varID] = id
		buf = sd.Message.Append(buf[:0], vs)
	}
	render()
	if a := testing.AllocsPerRun(1000, render); a != 0 {
		t.Errorf("%v allocs per render", a)
	}
	if !strings.HasPrefix(string(buf), `{"type":"patch","id":"c1-1002","ts":1002000,"data":"xxx`) {
		t.Errorf("rendered %s", buf[:60])
	}
}

// FuzzParse: no file makes the parser panic, and a file it accepts renders
// valid JSON from every message template.
func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	if b, err := readRooms(); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"roles":[{"name":"a","sends":[{"name":"s","rate":1,"message":"{payload}"}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			return
		}
		vs := &vars{}
		vs.strs[varPayload] = []byte("p\"q")
		for _, r := range s.Roles {
			for _, sd := range r.Sends {
				if out := sd.Message.Append(nil, vs); !json.Valid(out) {
					t.Fatalf("rendered invalid JSON %q from %q", out, b)
				}
			}
		}
	})
}

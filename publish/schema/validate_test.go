package schema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	s, err := Compile([]byte(`{
	  "type": "object", "required": ["n", "xs"],
	  "properties": {
	    "n": {"type": "integer", "minimum": 1},
	    "f": {"type": ["number", "null"], "minimum": 0},
	    "name": {"type": "string", "minLength": 1, "pattern": "^[a-z]+$"},
	    "kind": {"enum": ["a", "b"]},
	    "v": {"const": 1},
	    "xs": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/x"}}
	  },
	  "$defs": {"x": {"type": "object", "required": ["id"], "properties": {"id": {"type": "boolean"}}}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		doc  string
		want []Problem
	}{
		{`{"n": 1, "xs": [{"id": true}], "f": null, "name": "ok", "kind": "a", "v": 1.0}`, nil},
		{`{"n": 1.5, "xs": []}`, []Problem{{"n", "want integer, got number 1.5"}, {"xs", "want at least 1 item(s), got 0"}}},
		{`{"n": 0, "xs": [{}, {"id": 1}]}`, []Problem{{"n", "0 is below the minimum 1"}, {"xs[0].id", "missing"}, {"xs[1].id", "want boolean, got integer"}}},
		{`{"xs": [{"id": false}], "f": -1, "name": "", "kind": "c", "v": 2}`, []Problem{{"n", "missing"},
			{"f", "-1 is below the minimum 0"}, {"kind", `"c" is not one of "a", "b"`},
			{"name", "empty"}, {"name", `"" does not match ^[a-z]+$`}, {"v", "unsupported value 2 (want 1)"}}},
		{`[]`, []Problem{{"", "want object, got array"}}},
	}
	for _, tt := range tests {
		v, err := Decode([]byte(tt.doc))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, s.Validate(v)); diff != "" {
			t.Errorf("Validate(%s) (-want +got):\n%s", tt.doc, diff)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{`{"$ref": "#/$defs/nope"}`, `{"pattern": "("}`, `{"type": 3}`, `not json`} {
		if _, err := Compile([]byte(doc)); err == nil {
			t.Errorf("Compile(%s) succeeded, want an error", doc)
		}
	}
}

func TestSweepCompiles(t *testing.T) {
	t.Parallel()
	if _, err := Compile(Sweep); err != nil {
		t.Fatal(err)
	}
}

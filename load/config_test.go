package load_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ceiling-bench/ceiling/load"
	_ "github.com/ceiling-bench/ceiling/load/scenario/fanout"
)

// TestRecordedConfigIsTheConfig: the document's config (load.RecordedConfig,
// internal/wire's) has load.Config's JSON members, in the same order and
// of the same types, but for params (raw JSON there) and what is never
// written (JSONPath): a knob added to one and not the other fails here.
// And Record writes what marshalling the Config itself writes, params
// included.
func TestRecordedConfigIsTheConfig(t *testing.T) {
	members := func(typ reflect.Type) (names []string, types map[string]reflect.Type) {
		types = map[string]reflect.Type{}
		for f := range typ.Fields() {
			name, _, _ := bytes.Cut([]byte(f.Tag.Get("json")), []byte(","))
			if n := string(name); n != "-" {
				names = append(names, n)
				types[n] = f.Type
			}
		}
		return names, types
	}
	cn, ct := members(reflect.TypeFor[load.Config]())
	rn, rt := members(reflect.TypeFor[load.RecordedConfig]())
	if !reflect.DeepEqual(cn, rn) {
		t.Fatalf("load.Config's members %v, the document's %v", cn, rn)
	}
	for _, n := range cn {
		if n != "params" && ct[n] != rt[n] {
			t.Errorf("%s: %v in load.Config, %v in the document", n, ct[n], rt[n])
		}
	}

	cfg := load.DefaultConfig()
	cfg.Scenario, cfg.URL, cfg.URLs = "fanout", "ws://127.0.0.1:1", []string{"ws://127.0.0.1:1", "ws://127.0.0.1:2"}
	cfg.Rate, cfg.SourceAddrs, cfg.Drop, cfg.DropProbe, cfg.MeasureMarker, cfg.JSONPath = 50, "off", true, "tcp:127.0.0.1:1", "/m", "/j"
	d, _ := load.Lookup("fanout")
	cfg.Params = d.NewParams()
	want, err := json.Marshal(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := cfg.Record()
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || len(rec.Params) == 0 {
		t.Errorf("recorded\n%s\nwant\n%s", got, want)
	}
}

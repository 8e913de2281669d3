package refserver

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ceiling-bench/ceiling/pusher"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// asEvent converts a rawEvent to what encoding/json would have produced.
func asEvent(t testing.TB, r rawEvent) pusher.Event {
	t.Helper()
	ev := pusher.Event{Name: r.name, Channel: r.channel, Channels: r.channels, SocketID: r.socketID}
	if r.dataLit != nil {
		if err := json.Unmarshal(r.dataLit, &ev.Data); err != nil {
			t.Fatalf("data literal %s does not decode: %v", r.dataLit, err)
		}
	}
	if r.nameLit != nil {
		var n string
		if err := json.Unmarshal(r.nameLit, &n); err != nil || n != r.name {
			t.Fatalf("name literal %s decodes to %q (%v), name is %q", r.nameLit, n, err, r.name)
		}
	}
	return ev
}

// sameAsEncodingJSON fails unless decodeEvent and decodeBatch agree with
// encoding/json: both refuse, or both accept with equal events.
func sameAsEncodingJSON(t testing.TB, body []byte) {
	t.Helper()
	if !utf8.Valid(body) || strings.TrimSpace(string(body)) == "null" {
		return // refused before decoding / a case both refuse later
	}
	var want pusher.Event
	errJ := json.Unmarshal(body, &want)
	got, errM := decodeEvent(body)
	if (errJ == nil) != (errM == nil) {
		t.Fatalf("event %q: encoding/json error %v, ours %v", body, errJ, errM)
	}
	if errJ == nil {
		if diff := cmp.Diff(want, asEvent(t, got), cmpEvents); diff != "" {
			t.Fatalf("event %q (-encoding/json +ours):\n%s", body, diff)
		}
	}

	var wantB pusher.BatchEvents
	errJ = json.Unmarshal(body, &wantB)
	gotB, errM := decodeBatch(body, 1<<30)
	if (errJ == nil) != (errM == nil) {
		t.Fatalf("batch %q: encoding/json error %v, ours %v", body, errJ, errM)
	}
	if errJ == nil {
		var evs []pusher.Event
		for _, r := range gotB {
			evs = append(evs, asEvent(t, r))
		}
		if diff := cmp.Diff(wantB.Batch, evs, cmpEvents); diff != "" {
			t.Fatalf("batch %q (-encoding/json +ours):\n%s", body, diff)
		}
	}
}

// nil and empty slices mean the same here.
var cmpEvents = cmpopts.EquateEmpty()

var decodeCases = []string{
	`{"name":"foo","channels":["project-3"],"data":"{\"some\":\"data\"}"}`,
	`{"name":"e","channel":"c","data":"d","socket_id":"1.2"}`,
	` { "Name" : "e" , "CHANNEL":"c", "data":"x\u00e9\ud83d\ude00\n" , "extra": [1, -2.5e+3, true, false, null, {"a": {}}], "z": {} } `,
	`{"n\u0061me":"esc","channels":["a","b"],"channels":["c"]}`,
	`{"name":"a","name":null,"data":null,"channels":null}`,
	`{"channels":[null,"x"]}`,
	`{"name":5}`, `{"data":{"a":1}}`, `{"channels":"c"}`, `{"channels":[1]}`, `{"channel":[]}`,
	`{"name":"x"`, `{"name":"x",}`, `{"name" "x"}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`,
	`{"a":tru}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", `{"a":"\u12"}`, `{} {}`, `{}x`, ``, `[]`, `"s"`, `1`,
	`{"batch":[{"name":"a","channel":"c","data":"1"},{"name":"b","channels":["c","d"],"data":"2"},null]}`,
	`{"batch":null}`, `{"batch":{}}`, `{"batch":[1]}`, `{"batch":[{"name":1}]}`, `{"Batch":[],"x":1}`,
	`{"batch":[{"name":"a"}],"batch":[{"name":"b"}]}`,
	`{"a":[[[[[[[[[[]]]]]]]]]]}`,
	`{"socket_id":"1.2","socKet_id":"3.4"}`,
	"{\"data\":\"\u2028\"}",
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, c := range decodeCases {
		sameAsEncodingJSON(t, []byte(c))
	}
}

func FuzzDecodeMatchesEncodingJSON(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, body []byte) { sameAsEncodingJSON(t, body) })
}

func TestDecodeDepthLimit(t *testing.T) {
	body := `{"a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`
	if _, err := decodeEvent([]byte(body)); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("20000 nested arrays: %v, want a depth error", err)
	}
}

func TestDecodeBatchStopsAtMax(t *testing.T) {
	body := `{"batch":[{"name":"a"},{"name":"b"},{"name":"c"}]}`
	if _, err := decodeBatch([]byte(body), 2); err != errTooMany {
		if err == nil || !strings.Contains(err.Error(), errTooMany.Error()) {
			t.Errorf("3 events with max 2: %v, want errTooMany", err)
		}
	}
	if evs, err := decodeBatch([]byte(body), 3); err != nil || len(evs) != 3 {
		t.Errorf("3 events with max 3: %d events, %v", len(evs), err)
	}
}

package pusherclient

import (
	"bytes"
	"testing"

	"github.com/ceiling-bench/ceiling/pusher"
	"github.com/google/go-cmp/cmp"
)

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

func TestScanEvent(t *testing.T) {
	t.Parallel()
	type result struct {
		Event, Channel, Data string
		OK                   bool
	}
	tests := []struct {
		msg  string
		want result
	}{
		{`{"event":"tick","channel":"ch-0","data":"{\"ts\":123}"}`, result{"tick", "ch-0", `{\"ts\":123}`, true}},
		{`{"data":"x","channel":"c","event":"e"}`, result{"e", "c", "x", true}},
		{` { "event" : "e" , "data" : "" } `, result{"e", "", "", true}},
		{`{"event":"pusher:connection_established","data":"{\"socket_id\":\"1.2\",\"activity_timeout\":120}"}`,
			result{"pusher:connection_established", "", `{\"socket_id\":\"1.2\",\"activity_timeout\":120}`, true}},
		{`{"event":"pusher:error","data":{"message":"App key x not in this cluster","code":4001}}`,
			result{"pusher:error", "", `{"message":"App key x not in this cluster","code":4001}`, true}},
		{`{"event":"e","extra":[1,{"a":"}"}],"n":-1.5e3,"t":true,"z":null,"channel":"c"}`, result{"e", "c", "", true}},
		{`{"event":"e","data":"a \\\" b"}`, result{"e", "", `a \\\" b`, true}},
		{`{"channel":"c"}`, result{}},
		{`{}`, result{}},
		{`[]`, result{}},
		{``, result{}},
		{`{"event":1}`, result{}},
		{`{"event":"e"`, result{}},
		{`{"event":"e","data":"unterminated}`, result{}},
		{`{"event":"e" "data":"x"}`, result{}},
		{`{"event":"e","data":{"a":1}`, result{}},
	}
	for _, tt := range tests {
		e, c, d, ok := ScanEvent([]byte(tt.msg))
		got := result{string(e), string(c), string(d), ok}
		if !ok {
			got = result{}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ScanEvent(%s) (-want +got):\n%s", tt.msg, diff)
		}
	}
}

// The scanner reads exactly what the server's encoder writes.
func TestScanEventOfAppendEvent(t *testing.T) {
	t.Parallel()
	msg := pusher.AppendEvent(nil, "my-event", "presence-ch", `{"ts":1732900000123456789,"n":"\"q\""}`)
	e, c, d, ok := ScanEvent(msg)
	if !ok || string(e) != "my-event" || string(c) != "presence-ch" {
		t.Fatalf("ScanEvent(%s) = %q %q %q %v", msg, e, c, d, ok)
	}
	ts, ok := IntField(d, "ts")
	if !ok || ts != 1732900000123456789 {
		t.Errorf("IntField(%s, ts) = %d, %v", d, ts, ok)
	}
}

func TestIntField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		data, name string
		want       int64
		ok         bool
	}{
		{`{\"ts\":123}`, "ts", 123, true},
		{`{"ts":123}`, "ts", 123, true},
		{`{\"seq\":7,\"ts\": -42 }`, "ts", -42, true},
		{`{\"xts\":1,\"ts\":2}`, "ts", 2, true},
		{`{\"tsx\":1,\"ts\":3}`, "ts", 3, true},
		{`{\"ts\":\"123\"}`, "ts", 0, false},
		{`{\"ts\":1.5}`, "ts", 0, false},
		{`{\"ts\":99999999999999999999}`, "ts", 0, false},
		{`{\"other\":1}`, "ts", 0, false},
		{`{"ts"}`, "ts", 0, false},
		{``, "ts", 0, false},
		{`{\"ts\":9223372036854775807}`, "ts", 9223372036854775807, true},
	}
	for _, tt := range tests {
		got, ok := IntField([]byte(tt.data), tt.name)
		if got != tt.want || ok != tt.ok {
			t.Errorf("IntField(%s, %q) = %d, %v; want %d, %v", tt.data, tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestScanAllocatesNothing(t *testing.T) {
	msg := []byte(`{"event":"tick","channel":"ch-0","data":"{\"ts\":123,\"pad\":\"xxxxxxxx\"}"}`)
	n := testing.AllocsPerRun(1000, func() {
		_, _, d, ok := ScanEvent(msg)
		if !ok {
			t.Fatal("not ok")
		}
		if _, ok := IntField(d, "ts"); !ok {
			t.Fatal("no ts")
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per ScanEvent+IntField, want 0", n)
	}
}

func FuzzScanEvent(f *testing.F) {
	f.Add([]byte(`{"event":"tick","channel":"ch-0","data":"{\"ts\":123}"}`))
	f.Add([]byte(`{"event":"pusher:error","data":{"message":"x","code":4001}}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		e, c, d, ok := ScanEvent(msg)
		if ok && e == nil {
			t.Fatal("ok without event")
		}
		_, _ = IntField(d, "ts")
		_ = c
	})
}

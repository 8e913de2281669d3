package pusher

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// marshal is the reference the Append* encoders must match byte for byte.
func marshal(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func ptr(i int) *int { return &i }

func rawString(t *testing.T, s string) json.RawMessage {
	t.Helper()
	return json.RawMessage(marshal(t, s))
}

func TestAppendMessages(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want any
	}{
		{"event", AppendEvent(nil, "tick", "room-1", `{"n":1}`),
			Message{Event: "tick", Channel: "room-1", Data: rawString(t, `{"n":1}`)}},
		{"event without channel", AppendEvent([]byte{}, "tick", "", "x"),
			Message{Event: "tick", Data: rawString(t, "x")}},
		{"connection established", AppendConnectionEstablished(nil, "123.456", 120),
			Message{Event: EventConnectionEstablished, Data: rawString(t, `{"socket_id":"123.456","activity_timeout":120}`)}},
		{"subscription succeeded", AppendSubscriptionSucceeded(nil, "c"),
			Message{Event: EventSubscriptionSucceeded, Channel: "c", Data: rawString(t, "{}")}},
		{"pong", AppendPong(nil), Message{Event: EventPong, Data: rawString(t, "{}")}},
		{"ping", AppendPing(nil), Message{Event: EventPing, Data: rawString(t, "{}")}},
		{"error", AppendError(nil, CodeAppNotFound, `app "x" not found`),
			Message{Event: EventError, Data: json.RawMessage(marshal(t, ErrorData{Message: `app "x" not found`, Code: ptr(4001)}))}},
		{"error without code", AppendError(nil, 0, "bad"),
			Message{Event: EventError, Data: json.RawMessage(marshal(t, ErrorData{Message: "bad"}))}},
		{"subscribe", AppendSubscribe(nil, "c", false),
			Message{Event: EventSubscribe, Data: json.RawMessage(marshal(t, SubscribeData{Channel: "c"}))}},
		{"unsubscribe", AppendSubscribe(nil, "c", true),
			Message{Event: EventUnsubscribe, Data: json.RawMessage(marshal(t, SubscribeData{Channel: "c"}))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(marshal(t, tt.want), string(tt.got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestConnectionEstablishedRoundTrip(t *testing.T) {
	var m Message
	if err := json.Unmarshal(AppendConnectionEstablished(nil, "1.2", 30), &m); err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(m.Data, &s); err != nil {
		t.Fatalf("data is not a JSON string: %v", err)
	}
	var d ConnectionEstablishedData
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ConnectionEstablishedData{SocketID: "1.2", ActivityTimeout: 30}, d); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestEventTargets(t *testing.T) {
	tests := []struct {
		ev   Event
		want []string
	}{
		{Event{Channel: "a"}, []string{"a"}},
		{Event{Channels: []string{"a", "b"}}, []string{"a", "b"}},
		{Event{Channel: "c", Channels: []string{"a"}}, []string{"a", "c"}},
		{Event{}, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.ev.Targets()); diff != "" {
			t.Errorf("Targets(%+v) (-want +got):\n%s", tt.ev, diff)
		}
	}
}

func BenchmarkAppendEvent(b *testing.B) {
	buf := make([]byte, 0, 512)
	data := `{"id":12345,"ts":1700000000000,"body":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}`
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendEvent(buf[:0], "tick", "room-1", data)
	}
}

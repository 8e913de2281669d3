package pusher

// Event is the body of POST /apps/{id}/events and one entry of a batch.
// Data is the application payload as a string (usually JSON encoded once
// more). Either Channel or Channels names the target; SocketID excludes
// that connection from delivery.
type Event struct {
	Name     string   `json:"name"`
	Channel  string   `json:"channel,omitempty"`
	Channels []string `json:"channels,omitempty"`
	Data     string   `json:"data"`
	SocketID string   `json:"socket_id,omitempty"`
}

// BatchEvents is the body of POST /apps/{id}/batch_events.
type BatchEvents struct {
	Batch []Event `json:"batch"`
}

// Targets is the list of channels the event goes to: Channels, plus
// Channel when set.
func (e *Event) Targets() []string { return Targets(e.Channel, e.Channels) }

// Targets combines an event's "channel" and "channels" fields into the
// list of channels it goes to, in that order: channels, then channel.
func Targets(channel string, channels []string) []string {
	if channel == "" {
		return channels
	}
	if len(channels) == 0 {
		return []string{channel}
	}
	return append(append(make([]string, 0, len(channels)+1), channels...), channel)
}

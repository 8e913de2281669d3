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
func (e *Event) Targets() []string {
	if e.Channel == "" {
		return e.Channels
	}
	if len(e.Channels) == 0 {
		return []string{e.Channel}
	}
	return append(append(make([]string, 0, len(e.Channels)+1), e.Channels...), e.Channel)
}

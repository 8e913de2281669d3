package nats

import (
	"errors"
	"testing"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A pull without responders just after a reconnect is the restart's
// (JetStream recovering its streams): counted in reconnects, not in
// errors, also before the reconnect handler ran. The client runs the
// handler on a goroutine of its own, so the pull's error can come first
// (TestStreamReconnect, fresh-clone CI run 11). The connection here has
// counted a reconnect its handler has not seen yet: the state in between,
// held still.
func TestNoRespondersBeforeTheReconnectHandlerIsTheRestarts(t *testing.T) {
	nc := &natsgo.Conn{}
	nc.Reconnects = 1
	w := &worker{nc: nc}
	for _, err := range []error{natsgo.ErrNoResponders, jetstream.ErrNoStreamResponse} {
		if !w.recovering(err) {
			t.Errorf("recovering(%v) = false with a reconnect the handler has not seen, want true", err)
		}
	}
	if err := errors.New("nats: timeout"); w.recovering(err) {
		t.Errorf("recovering(%v) = true, want only a pull without responders", err)
	}
}
